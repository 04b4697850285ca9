/* Operators of the aclnn reference beyond the core families, against host references
 * (float64): Permute, SplitTensor, SplitWithSize, GatherV2, IndexCopy / InplaceIndexCopy,
 * Eye, IsInf / IsPosInf / IsNegInf, Prelu (+Backward), Threshold (+Inplace), Celu / Selu
 * (+Inplace), Glu (+Backward), Logit, LogAddExp / LogAddExp2, Addmv, Ger, Addbmm (+Inplace),
 * Inverse, Sinc (+Inplace), Heaviside, NormalTensorTensor / TensorFloat / FloatTensor /
 * FloatFloat, Randperm, Multinomial, ApplyAdamWV2, FusedSgd; each with its documented
 * argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: data movement and predicates exactly; elementwise float32 values to 1e-6
 * relative (computed in float64 and rounded once; the reference is float64 libm), float16
 * to one f16 rounding of the reference; products to 1e-5 relative (float32 accumulation of
 * at most 8 terms); inverses by A @ inv(A) = I to 1e-5. Inputs include a transposed and a
 * strided view. Random draws: reproducible for one (seed, offset), and their sample
 * statistics within 5 standard errors. */
#include <algorithm>
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_permute.h"
#include "aclnnop/aclnn_split_tensor.h"
#include "aclnnop/aclnn_split_with_size.h"
#include "aclnnop/aclnn_gather_v2.h"
#include "aclnnop/aclnn_index_copy.h"
#include "aclnnop/aclnn_eye.h"
#include "aclnnop/aclnn_is_inf.h"
#include "aclnnop/aclnn_isposinf.h"
#include "aclnnop/aclnn_isneginf.h"
#include "aclnnop/aclnn_prelu.h"
#include "aclnnop/aclnn_prelu_backward.h"
#include "aclnnop/aclnn_threshold.h"
#include "aclnnop/aclnn_celu.h"
#include "aclnnop/aclnn_selu.h"
#include "aclnnop/aclnn_glu.h"
#include "aclnnop/aclnn_glu_backward.h"
#include "aclnnop/aclnn_logit.h"
#include "aclnnop/aclnn_logaddexp.h"
#include "aclnnop/aclnn_logaddexp2.h"
#include "aclnnop/aclnn_addmv.h"
#include "aclnnop/aclnn_ger.h"
#include "aclnnop/aclnn_addbmm.h"
#include "aclnnop/aclnn_inverse.h"
#include "aclnnop/aclnn_sinc.h"
#include "aclnnop/aclnn_heaviside.h"
#include "aclnnop/aclnn_normal_out.h"
#include "aclnnop/aclnn_randperm.h"
#include "aclnnop/aclnn_multinomial.h"
#include "aclnnop/aclnn_apply_adam_w_v2.h"
#include "aclnnop/aclnn_fused_sgd.h"

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

static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }

/* The values stored as t (the rounding of one store). */
static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

static void shapes() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* Permute [2, 3, 4] by (2, 0, -2) -> [4, 2, 3] */
    std::vector<double> X(24);
    for (int i = 0; i < 24; i++) X[i] = i + 1;
    Dev x = make({2, 3, 4}, ACL_FLOAT, X);
    Dev p = make({4, 2, 3}, ACL_FLOAT, {0});
    aclIntArray *perm = ia({2, 0, -2});
    RUN(S, aclnnPermute, x.t, perm, p.t);
    std::vector<double> want;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) want.push_back(X[(i * 3 + j) * 4 + k]);
    compare("Permute (2, 0, -2) of [2, 3, 4]", read(p), want, 0);
    /* a transposed [3, 4] view permuted (1, 0) is its storage order */
    Dev xt = make({3, 4}, ACL_INT32, X, TRANSPOSED), pt = make({4, 3}, ACL_INT32, {0});
    aclIntArray *p10 = ia({1, 0});
    RUN(S, aclnnPermute, xt.t, p10, pt.t);
    want.clear();
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 3; i++) want.push_back(X[i * 4 + j]);
    compare("Permute (1, 0) of a transposed int32 [3, 4]", read(pt), want, 0);
    aclIntArray *rep = ia({0, 0, 1});
    expect_code("Permute dims repeating a dimension", aclnnPermuteGetWorkspaceSize(x.t, rep, p.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Permute null dims", aclnnPermuteGetWorkspaceSize(x.t, nullptr, p.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Permute int32 out of a float self", aclnnPermuteGetWorkspaceSize(x.t, perm, pt.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* SplitTensor [5, 2] by 2 along dim 0 -> [2, 2], [2, 2], [1, 2] */
    Dev s = make({5, 2}, ACL_FLOAT, X);
    Dev s0 = make({2, 2}, ACL_FLOAT, {0}), s1 = make({2, 2}, ACL_FLOAT, {0}), s2 = make({1, 2}, ACL_FLOAT, {0});
    aclTensorList *outs = tl({&s0, &s1, &s2});
    RUN(S, aclnnSplitTensor, s.t, 2, 0, outs);
    compare("SplitTensor part 0", read(s0), {1, 2, 3, 4}, 0);
    compare("SplitTensor part 1", read(s1), {5, 6, 7, 8}, 0);
    compare("SplitTensor part 2 (the remainder)", read(s2), {9, 10}, 0);
    aclTensorList *two = tl({&s0, &s1});
    expect_code("SplitTensor with too few outputs", aclnnSplitTensorGetWorkspaceSize(s.t, 2, 0, two, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("SplitTensor dim 2 of a 2-D self", aclnnSplitTensorGetWorkspaceSize(s.t, 2, 2, outs, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* SplitWithSize of a strided [2, 5] view by (1, 4) along dim -1 */
    Dev w = make({2, 5}, ACL_FLOAT16, X, STRIDED);
    Dev w0 = make({2, 1}, ACL_FLOAT16, {0}), w1 = make({2, 4}, ACL_FLOAT16, {0});
    aclTensorList *wo = tl({&w0, &w1});
    aclIntArray *sizes = ia({1, 4});
    RUN(S, aclnnSplitWithSize, w.t, sizes, -1, wo);
    compare("SplitWithSize (1, 4) part 0", read(w0), {1, 6}, 0);
    compare("SplitWithSize (1, 4) part 1", read(w1), {2, 3, 4, 5, 7, 8, 9, 10}, 0);
    aclIntArray *bad = ia({2, 4});
    expect_code("SplitWithSize sizes not summing to the dimension",
                aclnnSplitWithSizeGetWorkspaceSize(w.t, bad, -1, wo, &ws, &ex), ACLNN_ERR_PARAM_INVALID);

    /* GatherV2: the reference page's example, dim 0 and dim 1 */
    Dev g = make({3, 3}, ACL_FLOAT, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    Dev idx = make({2}, ACL_INT64, {1, 0});
    Dev g0 = make({2, 3}, ACL_FLOAT, {0}), g1 = make({3, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnGatherV2, g.t, 0, idx.t, g0.t);
    compare("GatherV2 dim 0", read(g0), {4, 5, 6, 1, 2, 3}, 0);
    RUN(S, aclnnGatherV2, g.t, 1, idx.t, g1.t);
    compare("GatherV2 dim 1", read(g1), {2, 1, 5, 4, 8, 7}, 0);
    /* a 2-D int32 index with negative entries: out [3, 2, 2] */
    Dev idx2 = make({2, 2}, ACL_INT32, {2, -3, 1, -1});
    Dev g2 = make({3, 2, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnGatherV2, g.t, 1, idx2.t, g2.t);
    compare("GatherV2 dim 1 with a [2, 2] index", read(g2), {3, 1, 2, 3, 6, 4, 5, 6, 9, 7, 8, 9}, 0);
    expect_code("GatherV2 out of the wrong shape", aclnnGatherV2GetWorkspaceSize(g.t, 1, idx2.t, g1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherV2 float index", aclnnGatherV2GetWorkspaceSize(g.t, 0, g0.t, g0.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherV2 null index", aclnnGatherV2GetWorkspaceSize(g.t, 0, nullptr, g0.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    /* an index out of range fails the task at the synchronisation */
    Dev far = make({2}, ACL_INT64, {0, 3});
    NN(aclnnGatherV2GetWorkspaceSize(g.t, 0, far.t, g0.t, &ws, &ex));
    NN(aclnnGatherV2(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL GatherV2 with index 3 of 3 succeeded\n");
        g_fail++;
    }

    /* IndexCopy along dim 0 into a copy; InplaceIndexCopy along dim 1 */
    Dev ic = make({4, 3}, ACL_FLOAT, X), io = make({4, 3}, ACL_FLOAT, {0});
    Dev cidx = make({2}, ACL_INT64, {3, 0}), src = make({2, 3}, ACL_FLOAT, {-1, -2, -3, -4, -5, -6});
    RUN(S, aclnnIndexCopy, ic.t, 0, cidx.t, src.t, io.t);
    compare("IndexCopy dim 0 rows (3, 0)", read(io), {-4, -5, -6, 4, 5, 6, 7, 8, 9, -1, -2, -3}, 0);
    compare("IndexCopy leaves self alone", read(ic), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 0);
    Dev cidx1 = make({1}, ACL_INT32, {-1}), src1 = make({4, 1}, ACL_FLOAT, {0.5, 1.5, 2.5, 3.5});
    RUN(S, aclnnInplaceIndexCopy, ic.t, 1, cidx1.t, src1.t);
    compare("InplaceIndexCopy column -1", read(ic), {1, 2, 0.5, 4, 5, 1.5, 7, 8, 2.5, 10, 11, 3.5}, 0);
    expect_code("IndexCopy source of the wrong shape",
                aclnnIndexCopyGetWorkspaceSize(ic.t, 0, cidx.t, src1.t, io.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexCopy 2-D index", aclnnIndexCopyGetWorkspaceSize(ic.t, 0, idx2.t, src.t, io.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* Eye */
    Dev e = make({3, 4}, ACL_FLOAT, {7}), ei = make({2, 2}, ACL_INT32, {7}), eb = make({2, 3}, ACL_BOOL, {1});
    RUN(S, aclnnEye, 3, 4, e.t);
    compare("Eye 3 x 4 float", read(e), {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, 0);
    RUN(S, aclnnEye, 2, 2, ei.t);
    compare("Eye 2 x 2 int32", read(ei), {1, 0, 0, 1}, 0);
    RUN(S, aclnnEye, 2, 3, eb.t);
    compare("Eye 2 x 3 bool", read(eb), {1, 0, 0, 0, 1, 0}, 0);
    expect_code("Eye out not (n, m)", aclnnEyeGetWorkspaceSize(3, 3, e.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Eye negative n", aclnnEyeGetWorkspaceSize(-1, 4, e.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Eye null out", aclnnEyeGetWorkspaceSize(3, 4, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);

    /* IsInf / IsPosInf / IsNegInf on float32, float16 and int32 */
    std::vector<double> V = {1, INFINITY, -INFINITY, NAN, 0, -2};
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16}) {
        Dev v = make({2, 3}, dt, V), o = make({2, 3}, ACL_BOOL, {0});
        RUN(S, aclnnIsInf, v.t, o.t);
        compare("IsInf", read(o), {0, 1, 1, 0, 0, 0}, 0);
        RUN(S, aclnnIsPosInf, v.t, o.t);
        compare("IsPosInf", read(o), {0, 1, 0, 0, 0, 0}, 0);
        RUN(S, aclnnIsNegInf, v.t, o.t);
        compare("IsNegInf", read(o), {0, 0, 1, 0, 0, 0}, 0);
        release(v);
        release(o);
    }
    Dev vi = make({3}, ACL_INT32, {1, 2147483647, -5}), vo = make({3}, ACL_BOOL, {1});
    RUN(S, aclnnIsInf, vi.t, vo.t);
    compare("IsInf of int32 is false", read(vo), {0, 0, 0}, 0);
    Dev vf = make({3}, ACL_FLOAT, {0});
    expect_code("IsInf float out", aclnnIsInfGetWorkspaceSize(vi.t, vf.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("IsPosInf null self", aclnnIsPosInfGetWorkspaceSize(nullptr, vo.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);

    aclDestroyIntArray(perm);
    aclDestroyIntArray(p10);
    aclDestroyIntArray(rep);
    aclDestroyIntArray(sizes);
    aclDestroyIntArray(bad);
    aclDestroyTensorList(outs);
    aclDestroyTensorList(two);
    aclDestroyTensorList(wo);
    for (Dev *d : {&x, &p, &xt, &pt, &g, &idx, &g0, &g1, &idx2, &g2, &far, &ic, &io, &cidx, &src, &cidx1, &src1,
                   &e, &ei, &eb, &vi, &vo, &vf})
        release(*d);
    printf("ok shapes\n");
}

static double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

static void pointwise() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* Prelu of [2, 3, 2] with a weight per channel, and with one weight */
    std::vector<double> X = values(12, ACL_FLOAT, 3);
    std::vector<double> W = {0.25, -0.5, 2};
    Dev x = make({2, 3, 2}, ACL_FLOAT, X), w = make({3}, ACL_FLOAT, W), o = make({2, 3, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnPrelu, x.t, w.t, o.t);
    std::vector<double> want(12);
    for (int i = 0; i < 12; i++) want[i] = X[i] > 0 ? X[i] : as_type(W[(i / 2) % 3] * X[i], ACL_FLOAT);
    compare("Prelu per channel", read(o), want, 0);
    /* the weight reshaped to [1, 3, 1], as torch's prelu passes it */
    Dev w13 = make({1, 3, 1}, ACL_FLOAT, W);
    RUN(S, aclnnPrelu, x.t, w13.t, o.t);
    compare("Prelu with a [1, 3, 1] weight", read(o), want, 0);
    release(w13);
    Dev w1 = make({1}, ACL_FLOAT, {0.125});
    RUN(S, aclnnPrelu, x.t, w1.t, o.t);
    for (int i = 0; i < 12; i++) want[i] = X[i] > 0 ? X[i] : as_type(0.125 * X[i], ACL_FLOAT);
    compare("Prelu with one weight", read(o), want, 0);
    Dev w2 = make({2}, ACL_FLOAT, {1, 2});
    expect_code("Prelu weight of 2 for 3 channels", aclnnPreluGetWorkspaceSize(x.t, w2.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* PreluBackward */
    std::vector<double> G = values(12, ACL_FLOAT, 4);
    Dev g = make({2, 3, 2}, ACL_FLOAT, G), gi = make({2, 3, 2}, ACL_FLOAT, {0}), gw = make({3}, ACL_FLOAT, {0});
    RUN(S, aclnnPreluBackward, g.t, x.t, w.t, gi.t, gw.t);
    std::vector<double> wgw(3, 0.0);
    for (int i = 0; i < 12; i++) {
        int c = (i / 2) % 3;
        want[i] = X[i] > 0 ? G[i] : as_type(G[i] * W[c], ACL_FLOAT);
        if (X[i] <= 0) wgw[c] += G[i] * X[i];
    }
    compare("PreluBackward gradInput", read(gi), want, 0);
    compare("PreluBackward gradWeight", read(gw), wgw, 1e-6);
    expect_code("PreluBackward null gradWeight",
                aclnnPreluBackwardGetWorkspaceSize(g.t, x.t, w.t, gi.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);

    /* Threshold: float32 (transposed view), int32, and in place on float16 */
    Dev xt = make({3, 4}, ACL_FLOAT, X, TRANSPOSED), ot = make({3, 4}, ACL_FLOAT, {0});
    aclScalar *th = fs(0.5f), *val = fs(-1.0f);
    RUN(S, aclnnThreshold, xt.t, th, val, ot.t);
    std::vector<double> T(12);
    for (int i = 0; i < 12; i++) T[i] = X[i] > static_cast<double>(0.5f) ? X[i] : -1;
    compare("Threshold 0.5 -> -1 of a transposed view", read(ot), T, 0);
    Dev xi = make({5}, ACL_INT32, {-3, 0, 1, 2, 7}), oi = make({5}, ACL_INT32, {0});
    int32_t t2 = 1, v9 = 9;
    aclScalar *ith = aclCreateScalar(&t2, ACL_INT32), *ival = aclCreateScalar(&v9, ACL_INT32);
    RUN(S, aclnnThreshold, xi.t, ith, ival, oi.t);
    compare("Threshold int32", read(oi), {9, 9, 9, 2, 7}, 0);
    Dev xh = make({12}, ACL_FLOAT16, X);
    RUN(S, aclnnInplaceThreshold, xh.t, th, val);
    for (int i = 0; i < 12; i++) {
        double v = as_type(X[i], ACL_FLOAT16);
        T[i] = v > 0.5 ? v : -1;
    }
    compare("InplaceThreshold float16", read(xh), T, 0);
    expect_code("Threshold null value", aclnnThresholdGetWorkspaceSize(xt.t, th, nullptr, ot.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Threshold out of another shape", aclnnThresholdGetWorkspaceSize(xt.t, th, val, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* Celu (alpha 2), Selu, in place */
    aclScalar *alpha = fs(2.0f), *zero = fs(0.0f);
    RUN(S, aclnnCelu, x.t, alpha, o.t);
    for (int i = 0; i < 12; i++) want[i] = X[i] > 0 ? X[i] : 2.0 * std::expm1(X[i] / 2.0);
    compare("Celu alpha 2", read(o), as(want, ACL_FLOAT), 1e-6);
    const double SA = 1.6732632423543772848170429916717, SS = 1.0507009873554804934193349852946;
    RUN(S, aclnnSelu, x.t, o.t);
    std::vector<double> sel(12);
    for (int i = 0; i < 12; i++) sel[i] = X[i] > 0 ? SS * X[i] : SS * SA * std::expm1(X[i]);
    compare("Selu", read(o), as(sel, ACL_FLOAT), 1e-6);
    Dev xs = make({12}, ACL_FLOAT16, X);
    RUN(S, aclnnInplaceSelu, xs.t);
    std::vector<double> selh(12);
    for (int i = 0; i < 12; i++) {
        double v = as_type(X[i], ACL_FLOAT16);
        selh[i] = v > 0 ? SS * v : SS * SA * std::expm1(v);
    }
    compare("InplaceSelu float16", read(xs), as(selh, ACL_FLOAT16), 1e-3);
    Dev xc = make({12}, ACL_FLOAT, X);
    RUN(S, aclnnInplaceCelu, xc.t, alpha);
    compare("InplaceCelu alpha 2", read(xc), as(want, ACL_FLOAT), 1e-6);
    expect_code("Celu alpha 0", aclnnCeluGetWorkspaceSize(x.t, zero, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev oh = make({2, 3, 2}, ACL_INT32, {0});
    expect_code("Selu int32 out", aclnnSeluGetWorkspaceSize(x.t, oh.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);

    /* Glu along the last dimension ([2, 3, 2] -> [2, 3, 1]) and dim 0 ([2, 3, 2] -> [1, 3, 2]) */
    Dev gl = make({2, 3, 1}, ACL_FLOAT, {0}), g0 = make({1, 3, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnGlu, x.t, -1, gl.t);
    std::vector<double> wl(6), w0(6);
    for (int i = 0; i < 6; i++) wl[i] = X[2 * i] * sig(X[2 * i + 1]);
    compare("Glu dim -1", read(gl), as(wl, ACL_FLOAT), 1e-6);
    RUN(S, aclnnGlu, x.t, 0, g0.t);
    for (int i = 0; i < 6; i++) w0[i] = X[i] * sig(X[i + 6]);
    compare("Glu dim 0", read(g0), as(w0, ACL_FLOAT), 1e-6);
    /* GluBackward along dim 0 */
    std::vector<double> GO = values(6, ACL_FLOAT, 5);
    Dev go = make({1, 3, 2}, ACL_FLOAT, GO), gx = make({2, 3, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnGluBackward, go.t, x.t, 0, gx.t);
    std::vector<double> wg(12);
    for (int i = 0; i < 6; i++) {
        double s = sig(X[i + 6]);
        wg[i] = GO[i] * s;
        wg[i + 6] = GO[i] * s * (1 - s) * X[i];
    }
    compare("GluBackward dim 0", read(gx), as(wg, ACL_FLOAT), 1e-6);
    Dev odd = make({3, 3}, ACL_FLOAT, {1}), oo = make({3, 1}, ACL_FLOAT, {0});
    expect_code("Glu of an odd dimension", aclnnGluGetWorkspaceSize(odd.t, 1, oo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Glu out of the wrong shape", aclnnGluGetWorkspaceSize(x.t, 0, gl.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);

    /* Logit with eps -1 (no clamp) and 0.2 */
    std::vector<double> P = {0.1, 0.25, 0.5, 0.9, 0.0, 1.0};
    Dev lp = make({6}, ACL_FLOAT, P), lo = make({6}, ACL_FLOAT, {0});
    RUN(S, aclnnLogit, lp.t, -1.0, lo.t);
    std::vector<double> wlog(6);
    for (int i = 0; i < 6; i++) {
        double z = as_type(P[i], ACL_FLOAT);
        wlog[i] = std::log(z / (1 - z));
    }
    compare("Logit eps -1", read(lo), as(wlog, ACL_FLOAT), 1e-6);
    RUN(S, aclnnLogit, lp.t, 0.2, lo.t);
    for (int i = 0; i < 6; i++) {
        double z = std::min(std::max(as_type(P[i], ACL_FLOAT), 0.2), 0.8);
        wlog[i] = std::log(z / (1 - z));
    }
    compare("Logit eps 0.2", read(lo), as(wlog, ACL_FLOAT), 1e-6);
    Dev li = make({6}, ACL_INT32, {0});
    expect_code("Logit int32 input", aclnnLogitGetWorkspaceSize(li.t, -1.0, lo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);

    /* LogAddExp / LogAddExp2 with broadcasting, float32 and int32 other */
    std::vector<double> A = values(6, ACL_FLOAT, 6), B = {0.5, -1, 800};
    Dev la = make({2, 3}, ACL_FLOAT, A), lb = make({3}, ACL_FLOAT, B), lab = make({2, 3}, ACL_FLOAT, {0});
    RUN(S, aclnnLogAddExp, la.t, lb.t, lab.t);
    std::vector<double> wa(6), w2v(6);
    for (int i = 0; i < 6; i++) {
        double a = A[i], b = B[i % 3], m = std::max(a, b);
        wa[i] = m + std::log1p(std::exp(-std::fabs(a - b)));
        w2v[i] = m + std::log1p(std::exp2(-std::fabs(a - b))) / std::log(2.0);
    }
    compare("LogAddExp broadcast [2, 3] with [3]", read(lab), as(wa, ACL_FLOAT), 1e-6);
    RUN(S, aclnnLogAddExp2, la.t, lb.t, lab.t);
    compare("LogAddExp2 broadcast [2, 3] with [3]", read(lab), as(w2v, ACL_FLOAT), 1e-6);
    Dev ia1 = make({3}, ACL_INT32, {1, 2, 3}), ia2 = make({3}, ACL_INT32, {1, 0, -3}), iao = make({3}, ACL_FLOAT, {0});
    RUN(S, aclnnLogAddExp, ia1.t, ia2.t, iao.t);
    std::vector<double> wi = {1 + std::log(2.0), 2 + std::log1p(std::exp(-2.0)), 3 + std::log1p(std::exp(-6.0))};
    compare("LogAddExp of int32 into float", read(iao), as(wi, ACL_FLOAT), 1e-6);
    Dev iai = make({3}, ACL_INT32, {0});
    expect_code("LogAddExp int32 out", aclnnLogAddExpGetWorkspaceSize(ia1.t, ia2.t, iai.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev lbad = make({4}, ACL_FLOAT, {0});
    expect_code("LogAddExp shapes that do not broadcast", aclnnLogAddExpGetWorkspaceSize(la.t, lbad.t, lab.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* Sinc: float32 (0 gives 1), int32 into float32, in place on float16 */
    std::vector<double> SX = {0, 0.5, -1.25, 3, 1e-3, -2.5};
    Dev sx = make({6}, ACL_FLOAT, SX), so = make({6}, ACL_FLOAT, {0});
    RUN(S, aclnnSinc, sx.t, so.t);
    std::vector<double> wsn(6);
    for (int i = 0; i < 6; i++) {
        double p = M_PI * SX[i];
        wsn[i] = SX[i] == 0 ? 1 : std::sin(p) / p;
    }
    compare("Sinc float32", read(so), as(wsn, ACL_FLOAT), 1e-6);
    Dev si = make({3}, ACL_INT32, {0, 1, -2}), sio = make({3}, ACL_FLOAT, {7});
    RUN(S, aclnnSinc, si.t, sio.t);
    compare("Sinc int32 into float32", read(sio), {1, as_type(std::sin(M_PI) / M_PI, ACL_FLOAT), as_type(std::sin(-2 * M_PI) / (-2 * M_PI), ACL_FLOAT)}, 1e-6);
    Dev sh = make({6}, ACL_FLOAT16, SX);
    RUN(S, aclnnInplaceSinc, sh.t);
    for (int i = 0; i < 6; i++) {
        double v = as_type(SX[i], ACL_FLOAT16), p = M_PI * v;
        wsn[i] = v == 0 ? 1 : std::sin(p) / p;
    }
    compare("InplaceSinc float16", read(sh), as(wsn, ACL_FLOAT16), 1e-3);
    Dev sio2 = make({3}, ACL_INT32, {0});
    expect_code("Sinc int32 out", aclnnSincGetWorkspaceSize(si.t, sio2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);

    /* Heaviside: input [2, 3] with zeros, values [3] broadcast */
    Dev hx = make({2, 3}, ACL_FLOAT, {-1.5, 0, 2, 0, NAN, -0.0}), hv = make({3}, ACL_FLOAT, {0.25, 0.5, 0.75});
    Dev ho = make({2, 3}, ACL_FLOAT, {9});
    RUN(S, aclnnHeaviside, hx.t, hv.t, ho.t);
    compare("Heaviside with values broadcast", read(ho), {0, 0.5, 1, 0.25, 0, 0.75}, 0);
    Dev hb = make({2}, ACL_FLOAT, {1, 1});
    expect_code("Heaviside values that do not broadcast", aclnnHeavisideGetWorkspaceSize(hx.t, hb.t, ho.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&sx, &so, &si, &sio, &sh, &sio2, &hx, &hv, &ho, &hb}) release(*d);
    for (aclScalar *sc : {th, val, ith, ival, alpha, zero}) aclDestroyScalar(sc);
    for (Dev *d : {&x, &w, &o, &w1, &w2, &g, &gi, &gw, &xt, &ot, &xi, &oi, &xh, &xs, &xc, &oh, &gl, &g0, &go, &gx,
                   &odd, &oo, &lp, &lo, &li, &la, &lb, &lab, &ia1, &ia2, &iao, &iai, &lbad})
        release(*d);
    printf("ok pointwise\n");
}

static void linalg() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* Addmv: out = beta * self + alpha * mat @ vec, mat a transposed [3, 4] view */
    std::vector<double> M = values(12, ACL_FLOAT, 7), V = values(4, ACL_FLOAT, 8), B = {0.5, -1.5, 2};
    Dev m = make({3, 4}, ACL_FLOAT, M, TRANSPOSED), v = make({4}, ACL_FLOAT, V), b = make({3}, ACL_FLOAT, B);
    Dev o = make({3}, ACL_FLOAT, {0});
    aclScalar *two = fs(2.0f), *half = fs(0.5f), *zero = fs(0.0f), *onehalf = fs(1.5f);
    RUN(S, aclnnAddmv, b.t, m.t, v.t, two, half, o.t, 0);
    std::vector<double> want(3);
    for (int i = 0; i < 3; i++) {
        double acc = 0;
        for (int k = 0; k < 4; k++) acc += M[i * 4 + k] * V[k];
        want[i] = 0.5 * B[i] + 2 * acc;
    }
    compare("Addmv beta 0.5 alpha 2 over a transposed mat", read(o), want, 1e-5);
    /* self of one element broadcasts; beta 0 ignores self (NaN) */
    Dev b1 = make({1}, ACL_FLOAT, {NAN});
    RUN(S, aclnnAddmv, b1.t, m.t, v.t, two, zero, o.t, 1);
    for (int i = 0; i < 3; i++) want[i] -= 0.5 * B[i];
    compare("Addmv beta 0 ignores a NaN self", read(o), want, 1e-5);
    Dev v5 = make({5}, ACL_FLOAT, {1});
    expect_code("Addmv mat [3, 4] with vec [5]", aclnnAddmvGetWorkspaceSize(b.t, m.t, v5.t, two, half, o.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Addmv cubeMathType 7", aclnnAddmvGetWorkspaceSize(b.t, m.t, v.t, two, half, o.t, 7, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Addmv null alpha", aclnnAddmvGetWorkspaceSize(b.t, m.t, v.t, nullptr, half, o.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);

    /* Ger: float32 x int32 -> float32, int32 x int32 -> int32 */
    Dev ga = make({3}, ACL_FLOAT, {1.5, -2, 0.25}), gb = make({2}, ACL_INT32, {3, -4});
    Dev go = make({3, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnGer, ga.t, gb.t, go.t);
    compare("Ger float32 x int32", read(go), {4.5, -6, -6, 8, 0.75, -1}, 0);
    Dev gi = make({2}, ACL_INT32, {7, -1}), gio = make({2, 2}, ACL_INT32, {0});
    RUN(S, aclnnGer, gi.t, gb.t, gio.t);
    compare("Ger int32", read(gio), {21, -28, -3, 4}, 0);
    expect_code("Ger 2-D self", aclnnGerGetWorkspaceSize(gio.t, gb.t, gio.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);

    /* Addbmm: self [3, 5], batch1 [4, 3, 2], batch2 [4, 2, 5]; then in place */
    std::vector<double> S0 = values(15, ACL_FLOAT, 9), P = values(24, ACL_FLOAT, 10), Q = values(40, ACL_FLOAT, 11);
    Dev s = make({3, 5}, ACL_FLOAT, S0), p = make({4, 3, 2}, ACL_FLOAT, P), q = make({4, 2, 5}, ACL_FLOAT, Q);
    Dev ao = make({3, 5}, ACL_FLOAT, {0});
    RUN(S, aclnnAddbmm, s.t, p.t, q.t, half, onehalf, ao.t, 1);
    std::vector<double> wa(15);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
            double acc = 0;
            for (int bb = 0; bb < 4; bb++)
                for (int k = 0; k < 2; k++) acc += P[(bb * 3 + i) * 2 + k] * Q[(bb * 2 + k) * 5 + j];
            wa[i * 5 + j] = 0.5 * S0[i * 5 + j] + 1.5 * acc;
        }
    compare("Addbmm beta 0.5 alpha 1.5", read(ao), wa, 1e-5);
    RUN(S, aclnnInplaceAddbmm, s.t, p.t, q.t, half, onehalf, 1);
    compare("InplaceAddbmm", read(s), wa, 1e-5);
    Dev q3 = make({3, 2, 5}, ACL_FLOAT, {1});
    expect_code("Addbmm batches 4 and 3", aclnnAddbmmGetWorkspaceSize(s.t, p.t, q3.t, half, onehalf, ao.t, 1, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* Inverse of a batch of two 3 x 3 matrices (the first needs a row exchange) */
    std::vector<double> A = {0, 2, 1, 4, 1, 0, 3, 0, 1, 2, -1, 0, -1, 2, -1, 0, -1, 2};
    Dev ia = make({2, 3, 3}, ACL_FLOAT, A), io = make({2, 3, 3}, ACL_FLOAT, {0});
    RUN(S, aclnnInverse, ia.t, io.t);
    std::vector<double> INV = read(io), prod(18), eye(18);
    for (int bb = 0; bb < 2; bb++)
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++) {
                double acc = 0;
                for (int k = 0; k < 3; k++) acc += A[bb * 9 + r * 3 + k] * INV[bb * 9 + k * 3 + c];
                prod[bb * 9 + r * 3 + c] = acc;
                eye[bb * 9 + r * 3 + c] = r == c;
            }
    compare("Inverse: A @ inv(A) is the identity", prod, eye, 1e-5);
    Dev rect = make({2, 3}, ACL_FLOAT, {1}), ro = make({2, 3}, ACL_FLOAT, {0});
    expect_code("Inverse of a [2, 3] matrix", aclnnInverseGetWorkspaceSize(rect.t, ro.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* a singular matrix fails the task at the synchronisation */
    Dev sing = make({2, 2}, ACL_FLOAT, {1, 2, 2, 4}), so = make({2, 2}, ACL_FLOAT, {0});
    NN(aclnnInverseGetWorkspaceSize(sing.t, so.t, &ws, &ex));
    NN(aclnnInverse(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL Inverse of a singular matrix succeeded\n");
        g_fail++;
    }

    for (aclScalar *sc : {two, half, zero, onehalf}) aclDestroyScalar(sc);
    for (Dev *d : {&m, &v, &b, &o, &b1, &v5, &ga, &gb, &go, &gi, &gio, &s, &p, &q, &ao, &q3, &ia, &io, &rect, &ro,
                   &sing, &so})
        release(*d);
    printf("ok linalg\n");
}

static void moments(const std::vector<double> &v, size_t from, size_t n, double *mean, double *sd) {
    double s = 0, q = 0;
    for (size_t i = from; i < from + n; i++) s += v[i];
    *mean = s / static_cast<double>(n);
    for (size_t i = from; i < from + n; i++) q += (v[i] - *mean) * (v[i] - *mean);
    *sd = std::sqrt(q / static_cast<double>(n - 1));
}

static void near(const char *what, double got, double want, double tol) {
    g_checks++;
    if (!(std::fabs(got - want) <= tol)) {
        printf("FAIL %s: %.6g, expected %.6g +- %.3g\n", what, got, want, tol);
        g_fail++;
    }
}

static void sampling() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* NormalFloatFloat: 8192 draws of N(2, 0.5^2); the same seed and offset repeat them */
    Dev a = make({8192}, ACL_FLOAT, {0}), b = make({8192}, ACL_FLOAT, {0});
    RUN(S, aclnnNormalFloatFloat, 2.0f, 0.5f, 42, 0, a.t);
    RUN(S, aclnnNormalFloatFloat, 2.0f, 0.5f, 42, 0, b.t);
    std::vector<double> A = read(a), B = read(b);
    compare("NormalFloatFloat repeats for one seed and offset", B, A, 0);
    double m, sd;
    moments(A, 0, 8192, &m, &sd);
    near("NormalFloatFloat mean", m, 2, 5 * 0.5 / std::sqrt(8192.0));
    near("NormalFloatFloat std", sd, 0.5, 0.02);
    RUN(S, aclnnNormalFloatFloat, 2.0f, 0.5f, 42, 4, b.t);
    g_checks++;
    if (read(b) == A) {
        printf("FAIL NormalFloatFloat: another offset gave the same draws\n");
        g_fail++;
    }
    expect_code("NormalFloatFloat negative std", aclnnNormalFloatFloatGetWorkspaceSize(0, -1, 1, 0, a.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* NormalTensorTensor: mean [4, 1] and std [1, 2048] broadcast to out [4, 2048] */
    Dev mt = make({4, 1}, ACL_FLOAT, {-100, 0, 100, 1000}), st = make({1, 2048}, ACL_FLOAT, {1});
    Dev tt = make({4, 2048}, ACL_FLOAT, {0});
    RUN(S, aclnnNormalTensorTensor, mt.t, st.t, 7, 0, tt.t);
    std::vector<double> T = read(tt);
    const double MU[4] = {-100, 0, 100, 1000};
    for (int r = 0; r < 4; r++) {
        moments(T, static_cast<size_t>(r) * 2048, 2048, &m, &sd);
        near("NormalTensorTensor row mean", m, MU[r], 5 / std::sqrt(2048.0) + 1e-4 * std::fabs(MU[r]));
        near("NormalTensorTensor row std", sd, 1, 0.08);
    }
    Dev bad = make({4, 3}, ACL_FLOAT, {0});
    expect_code("NormalTensorTensor out not the broadcast shape",
                aclnnNormalTensorTensorGetWorkspaceSize(mt.t, st.t, 7, 0, bad.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* NormalTensorFloat with std 0 is the mean; NormalFloatTensor draws around a float mean */
    Dev mf = make({5}, ACL_FLOAT16, {1, -2, 3.5, 0, 8}), of = make({5}, ACL_FLOAT16, {0});
    RUN(S, aclnnNormalTensorFloat, mf.t, 0.0f, 1, 0, of.t);
    compare("NormalTensorFloat with std 0", read(of), {1, -2, 3.5, 0, 8}, 0);
    Dev sf = make({4096}, ACL_FLOAT, {2}), fo = make({4096}, ACL_FLOAT, {0});
    RUN(S, aclnnNormalFloatTensor, -3.0f, sf.t, 9, 0, fo.t);
    std::vector<double> F = read(fo);
    moments(F, 0, 4096, &m, &sd);
    near("NormalFloatTensor mean", m, -3, 5 * 2 / std::sqrt(4096.0));
    near("NormalFloatTensor std", sd, 2, 0.12);
    /* a negative std element fails the task */
    Dev sneg = make({3}, ACL_FLOAT, {1, -1, 1}), on = make({3}, ACL_FLOAT, {0});
    NN(aclnnNormalFloatTensorGetWorkspaceSize(0.0f, sneg.t, 1, 0, on.t, &ws, &ex));
    NN(aclnnNormalFloatTensor(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL NormalFloatTensor with a negative std succeeded\n");
        g_fail++;
    }

    /* Randperm: a permutation of 0..n-1, reproducible */
    Dev p1 = make({100}, ACL_INT64, {0}), p2 = make({100}, ACL_INT64, {0}), pf = make({10}, ACL_FLOAT, {0});
    RUN(S, aclnnRandperm, 100, 5, 0, p1.t);
    RUN(S, aclnnRandperm, 100, 5, 0, p2.t);
    std::vector<double> P1 = read(p1), sorted = P1, iota(100);
    compare("Randperm repeats for one seed and offset", read(p2), P1, 0);
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 100; i++) iota[i] = i;
    compare("Randperm 100 is a permutation of 0..99", sorted, iota, 0);
    g_checks++;
    if (P1 == iota) {
        printf("FAIL Randperm returned the identity\n");
        g_fail++;
    }
    RUN(S, aclnnRandperm, 10, 5, 0, pf.t);
    std::vector<double> PF = read(pf);
    std::sort(PF.begin(), PF.end());
    compare("Randperm 10 into float32", PF, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0);
    expect_code("Randperm negative n", aclnnRandpermGetWorkspaceSize(-1, 5, 0, p1.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Randperm out of another length", aclnnRandpermGetWorkspaceSize(99, 5, 0, p1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* Multinomial: with replacement (frequencies), without (distinct indices), errors */
    Dev pr = make({2, 4}, ACL_FLOAT, {0, 3, 0, 1, 0, 0, 5, 0}), mo = make({2, 2000}, ACL_INT64, {0});
    RUN(S, aclnnMultinomial, pr.t, 2000, true, 11, 0, mo.t);
    std::vector<double> MO = read(mo);
    int ones = 0, others = 0, twos = 0;
    for (int i = 0; i < 2000; i++) {
        if (MO[i] == 1) ones++;
        else if (MO[i] != 3) others++;
        if (MO[2000 + i] == 2) twos++;
    }
    g_checks++;
    if (others != 0 || twos != 2000) {
        printf("FAIL Multinomial drew a category of weight 0 (%d in row 0, %d in row 1)\n", others, 2000 - twos);
        g_fail++;
    }
    near("Multinomial frequency of weight 3 of 4", ones / 2000.0, 0.75, 5 * std::sqrt(0.75 * 0.25 / 2000));
    Dev p4 = make({4}, ACL_FLOAT, {0, 3, 0, 1}), m2 = make({2}, ACL_INT64, {0});
    RUN(S, aclnnMultinomial, p4.t, 2, false, 11, 0, m2.t);
    std::vector<double> M2 = read(m2);
    std::sort(M2.begin(), M2.end());
    compare("Multinomial 2 of 2 non-zero categories without replacement", M2, {1, 3}, 0);
    Dev m5 = make({5}, ACL_INT64, {0}), m2i = make({2}, ACL_INT32, {0});
    expect_code("Multinomial 5 of 4 without replacement",
                aclnnMultinomialGetWorkspaceSize(p4.t, 5, false, 1, 0, m5.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Multinomial int32 out", aclnnMultinomialGetWorkspaceSize(p4.t, 2, true, 1, 0, m2i.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev z4 = make({4}, ACL_FLOAT, {0});
    NN(aclnnMultinomialGetWorkspaceSize(z4.t, 2, true, 1, 0, m2.t, &ws, &ex));
    NN(aclnnMultinomial(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL Multinomial of weights summing to 0 succeeded\n");
        g_fail++;
    }
    for (Dev *d : {&a, &b, &mt, &st, &tt, &bad, &mf, &of, &sf, &fo, &sneg, &on, &p1, &p2, &pf, &pr, &mo, &p4, &m2, &m5,
                   &m2i, &z4})
        release(*d);
    printf("ok sampling\n");
}

/* Host AdamW (PyTorch's torch.optim.AdamW), in float64 with float32 storage of each state. */
static void adamw_ref(std::vector<double> &p, std::vector<double> &m, std::vector<double> &v, std::vector<double> &mx,
                      const std::vector<double> &g, int t, double lr, double b1, double b2, double wd, double eps,
                      bool ams, bool maximize) {
    for (size_t i = 0; i < p.size(); i++) {
        double gi = maximize ? -g[i] : g[i];
        m[i] = as_type(b1 * m[i] + (1 - b1) * gi, ACL_FLOAT);
        v[i] = as_type(b2 * v[i] + (1 - b2) * gi * gi, ACL_FLOAT);
        if (ams) mx[i] = std::max(mx[i], v[i]);
        double s = ams ? mx[i] : v[i];
        double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
        p[i] = as_type(p[i] * (1 - lr * wd) - lr / bc1 * m[i] / (std::sqrt(s) / std::sqrt(bc2) + eps), ACL_FLOAT);
    }
}

static void optim() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const float lr = 0.01f, b1 = 0.9f, b2 = 0.999f, wd = 0.1f, eps = 1e-8f;
    for (int variant = 0; variant < 2; variant++) {
        bool ams = variant == 1, maximize = variant == 1;
        std::vector<double> P = values(6, ACL_FLOAT, 21), G1 = values(6, ACL_FLOAT, 22), G2 = values(6, ACL_FLOAT, 23);
        std::vector<double> M(6, 0), V(6, 0), MX(6, 0);
        Dev p = make({2, 3}, ACL_FLOAT, P), m = make({2, 3}, ACL_FLOAT, {0}), v = make({2, 3}, ACL_FLOAT, {0});
        /* CANN's kernel counts the step as the value read plus one (torch_npu's fused AdamW passes
         * state_steps - 1): 0 and 1 make the first and second steps. */
        Dev mx = make({2, 3}, ACL_FLOAT, {0}), g = make({2, 3}, ACL_FLOAT, G1), st = make({1}, ACL_INT64, {0});
        RUN(S, aclnnApplyAdamWV2, p.t, m.t, v.t, ams ? mx.t : nullptr, g.t, st.t, lr, b1, b2, wd, eps, ams, maximize);
        adamw_ref(P, M, V, MX, G1, 1, lr, b1, b2, wd, eps, ams, maximize);
        Dev g2 = make({2, 3}, ACL_FLOAT, G2), st2 = make({1}, ACL_FLOAT, {1});
        RUN(S, aclnnApplyAdamWV2, p.t, m.t, v.t, ams ? mx.t : nullptr, g2.t, st2.t, lr, b1, b2, wd, eps, ams, maximize);
        adamw_ref(P, M, V, MX, G2, 2, lr, b1, b2, wd, eps, ams, maximize);
        compare(ams ? "ApplyAdamWV2 amsgrad+maximize: var after 2 steps" : "ApplyAdamWV2: var after 2 steps", read(p), P, 1e-6);
        compare("ApplyAdamWV2: m after 2 steps", read(m), M, 1e-6);
        compare("ApplyAdamWV2: v after 2 steps", read(v), V, 1e-6);
        if (ams) compare("ApplyAdamWV2: max v after 2 steps", read(mx), MX, 1e-6);
        if (ams) {
            expect_code("ApplyAdamWV2 amsgrad without maxGradNormOptionalRef",
                        aclnnApplyAdamWV2GetWorkspaceSize(p.t, m.t, v.t, nullptr, g.t, st.t, lr, b1, b2, wd, eps, true,
                                                          false, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            Dev mh = make({2, 3}, ACL_FLOAT16, {0});
            expect_code("ApplyAdamWV2 float16 m for a float32 var",
                        aclnnApplyAdamWV2GetWorkspaceSize(p.t, mh.t, v.t, nullptr, g.t, st.t, lr, b1, b2, wd, eps, false,
                                                          false, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            release(mh);
        }
        for (Dev *d : {&p, &m, &v, &mx, &g, &st, &g2, &st2}) release(*d);
    }
    printf("ok optim\n");
}

/* Host SGD step as CANN's FusedSgd documents it (float64, float32 storage of each state). */
static void sgd_ref(std::vector<double> &p, std::vector<double> &g, std::vector<double> *buf, double scale, double wd,
                    double mu, double lr, double damp, bool nesterov, bool maximize, bool first) {
    for (size_t i = 0; i < p.size(); i++) {
        if (scale != 0) g[i] = as_type(g[i] * (double)(1.0f / (float)scale), ACL_FLOAT);
        double d = (maximize ? -g[i] : g[i]) + wd * p[i], upd = d;
        if (buf) {
            double &b = (*buf)[i];
            b = as_type(first ? d : mu * b + (1 - damp) * d, ACL_FLOAT);
            upd = nesterov ? d + mu * b : b;
        }
        p[i] = as_type(p[i] - lr * upd, ACL_FLOAT);
    }
}

static void fused_sgd() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* Two parameters (one a transposed view), three steps: the first with isFirstStep and a
     * gradient scale of 4, then nesterov with weight decay and maximize. */
    std::vector<double> P1 = values(6, ACL_FLOAT, 31), P2 = values(4, ACL_FLOAT, 32);
    std::vector<double> G1 = values(6, ACL_FLOAT, 33), G2 = values(4, ACL_FLOAT, 34);
    std::vector<double> B1(6, 0), B2(4, 0);
    Dev p1 = make({2, 3}, ACL_FLOAT, P1), p2 = make({2, 2}, ACL_FLOAT, P2);
    Dev g1 = make({2, 3}, ACL_FLOAT, G1), g2 = make({2, 2}, ACL_FLOAT, G2);
    Dev b1 = make({2, 3}, ACL_FLOAT, {0}), b2 = make({2, 2}, ACL_FLOAT, {0}), sc = make({1}, ACL_FLOAT, {4});
    aclTensorList *ps = tl({&p1, &p2}), *gs = tl({&g1, &g2}), *bs = tl({&b1, &b2});
    RUN(S, aclnnFusedSgd, ps, gs, bs, sc.t, 0.0f, 0.9f, 0.1f, 0.0f, false, false, true);
    sgd_ref(P1, G1, &B1, 4, 0, 0.9f, 0.1f, 0, false, false, true);
    sgd_ref(P2, G2, &B2, 4, 0, 0.9f, 0.1f, 0, false, false, true);
    compare("FusedSgd first step with gradScale: grads unscaled in place", read(g1), G1, 1e-6);
    for (int step = 0; step < 2; step++) {
        RUN(S, aclnnFusedSgd, ps, gs, bs, nullptr, 0.01f, 0.9f, 0.1f, 0.0f, true, true, false);
        sgd_ref(P1, G1, &B1, 0, 0.01f, 0.9f, 0.1f, 0, true, true, false);
        sgd_ref(P2, G2, &B2, 0, 0.01f, 0.9f, 0.1f, 0, true, true, false);
    }
    compare("FusedSgd: param 0 after 3 steps", read(p1), P1, 1e-6);
    compare("FusedSgd: param 1 after 3 steps", read(p2), P2, 1e-6);
    compare("FusedSgd: momentum 0 after 3 steps", read(b1), B1, 1e-6);
    compare("FusedSgd: momentum 1 after 3 steps", read(b2), B2, 1e-6);
    /* Without momentum buffers (momentum 0), dampening ignored. */
    aclTensorList *none = aclCreateTensorList(nullptr, 0);
    RUN(S, aclnnFusedSgd, ps, gs, none, nullptr, 0.0f, 0.0f, 0.5f, 0.0f, false, false, false);
    sgd_ref(P1, G1, nullptr, 0, 0, 0, 0.5f, 0, false, false, false);
    compare("FusedSgd without momentum: param 0", read(p1), P1, 1e-6);
    /* The documented argument errors. */
    expect_code("FusedSgd paramsRef nullptr",
                aclnnFusedSgdGetWorkspaceSize(nullptr, gs, bs, nullptr, 0, 0.9f, 0.1f, 0, false, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FusedSgd negative lr",
                aclnnFusedSgdGetWorkspaceSize(ps, gs, bs, nullptr, 0, 0.9f, -0.1f, 0, false, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FusedSgd nesterov with dampening",
                aclnnFusedSgdGetWorkspaceSize(ps, gs, bs, nullptr, 0, 0.9f, 0.1f, 0.5f, true, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FusedSgd momentum without buffers",
                aclnnFusedSgdGetWorkspaceSize(ps, gs, nullptr, nullptr, 0, 0.9f, 0.1f, 0, false, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclTensorList *short_gs = tl({&g1});
    expect_code("FusedSgd one gradient for two parameters",
                aclnnFusedSgdGetWorkspaceSize(ps, short_gs, bs, nullptr, 0, 0.9f, 0.1f, 0, false, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclTensorList *swapped = tl({&g2, &g1});
    expect_code("FusedSgd gradient shapes swapped",
                aclnnFusedSgdGetWorkspaceSize(ps, swapped, bs, nullptr, 0, 0.9f, 0.1f, 0, false, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev h1 = make({2, 3}, ACL_FLOAT16, {0});
    aclTensorList *mixed = tl({&h1, &g2});
    expect_code("FusedSgd float16 gradient for float32 parameters",
                aclnnFusedSgdGetWorkspaceSize(ps, mixed, bs, nullptr, 0, 0.9f, 0.1f, 0, false, false, false, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* A zero gradient scale fails the task, not silently infinity. */
    Dev zero = make({1}, ACL_FLOAT, {0});
    NN(aclnnFusedSgdGetWorkspaceSize(ps, gs, bs, zero.t, 0, 0.9f, 0.1f, 0, false, false, false, &ws, &ex));
    NN(aclnnFusedSgd(nullptr, 0, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL FusedSgd with a zero gradScale succeeded\n");
        g_fail++;
    }
    for (aclTensorList *l : {ps, gs, bs, none, short_gs, swapped, mixed}) aclDestroyTensorList(l);
    for (Dev *d : {&p1, &p2, &g1, &g2, &b1, &b2, &sc, &h1, &zero}) release(*d);
    printf("ok fused sgd\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    shapes();
    pointwise();
    linalg();
    sampling();
    optim();
    fused_sgd();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
