/* The quantisation and MoE operators of large-model inference, against host references
 * written from the reference's formulas: AscendQuant (+V3), DynamicQuant (+V2),
 * MoeGatingTopKSoftmax, TransQuantParamV2, QuantMatmulV3/V4/V5, WeightQuantBatchMatmulV2/V3,
 * GroupedMatmulV4/V5, MoeInitRouting, MoeComputeExpertTokens, MoeFinalizeRouting (+V2);
 * each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: quantised integers exactly (round half to even, computed in float32 as the
 * formulas read), scales to float32 rounding; products accumulate in float32 on the device
 * and in double here, so float16/bfloat16 outputs compare to 1e-2 relative and requantised
 * int8 products to one unit. Inputs include transposed and strided views. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include "ops_ref.h"
#include "aclnnop/aclnn_ascend_quant.h"
#include "aclnnop/aclnn_ascend_quant_v3.h"
#include "aclnnop/aclnn_dynamic_quant.h"
#include "aclnnop/aclnn_dynamic_quant_v2.h"
#include "aclnnop/aclnn_moe_gating_top_k_softmax.h"
#include "aclnnop/aclnn_moe_gating_top_k_softmax_v2.h"
#include "aclnnop/aclnn_trans_quant_param_v2.h"
#include "aclnnop/aclnn_quant_matmul_v3.h"
#include "aclnnop/aclnn_quant_matmul_v4.h"
#include "aclnnop/aclnn_quant_matmul_v5.h"
#include "aclnnop/aclnn_weight_quant_batch_matmul_v2.h"
#include "aclnnop/aclnn_weight_quant_batch_matmul_v3.h"
#include "aclnnop/aclnn_grouped_matmul_v4.h"
#include "aclnnop/aclnn_grouped_matmul_v5.h"
#include "aclnnop/aclnn_moe_init_routing.h"
#include "aclnnop/aclnn_moe_compute_expert_tokens.h"
#include "aclnnop/aclnn_moe_finalize_routing.h"
#include "aclnnop/aclnn_moe_finalize_routing_v2.h"

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

/* float32 v rounded half to even and saturated to int8 (NaN -> 0) */
static double q8(float v) {
    if (std::isnan(v)) return 0;
    double r = std::nearbyint(static_cast<double>(v));
    return std::min(127.0, std::max(-128.0, r));
}

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* the float32 scale TransQuantParamV2 keeps: the low 13 mantissa bits cleared */
static float trunc19(float s) { return from_bits(bits(s) & 0xFFFFE000u); }

static std::vector<double> f16s(std::vector<double> v, aclDataType t) {
    for (auto &e : v) e = as_type(e, t);
    return v;
}

static bool within_one(const char *what, const std::vector<double> &got, const std::vector<double> &want) {
    g_checks++;
    for (size_t i = 0; i < want.size(); i++)
        if (std::fabs(got[i] - want[i]) > 1) {
            printf("FAIL %s: element %zu is %g, expected %g (+-1)\n", what, i, got[i], want[i]);
            g_fail++;
            return false;
        }
    return true;
}

/* ---------------------------------------------------------------- AscendQuant */

static void ascend_quant() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* halves round to even, out-of-range values saturate; transposed float [3, 8] */
    std::vector<double> X(24);
    const double halves[8] = {0.5, 1.5, 2.5, -0.5, -1.5, 300, -300, 3.25};
    for (int i = 0; i < 24; i++) X[i] = halves[i % 8] + (i / 8) * 0.25;
    std::vector<double> Sc = {1, 1, 1, 1, 1, 0.5, 0.5, 2}, Of = {0, 0, 0, 0, 0, 0, 0, 1};
    Dev x = make({3, 8}, ACL_FLOAT, X, TRANSPOSED), s = make({8}, ACL_FLOAT, Sc), o = make({8}, ACL_FLOAT, Of);
    Dev y = make({3, 8}, ACL_INT8, {0});
    RUN(S, aclnnAscendQuant, x.t, s.t, o.t, false, "round", ACL_INT8, y.t);
    std::vector<double> want(24);
    for (int i = 0; i < 24; i++)
        want[i] = q8(static_cast<float>(X[i]) * static_cast<float>(Sc[i % 8]) + static_cast<float>(Of[i % 8]));
    compare("AscendQuant float [3, 8] transposed, round (half to even), saturating", read(y), want, 0);
    /* float16, sqrtMode, floor, one scale, no offset */
    std::vector<double> H = values(12, ACL_FLOAT16, 3);
    Dev xh = make({4, 3}, ACL_FLOAT16, H, STRIDED), sh = make({1}, ACL_FLOAT16, {1.5}), yh = make({4, 3}, ACL_INT8, {0});
    RUN(S, aclnnAscendQuant, xh.t, sh.t, nullptr, true, "floor", ACL_INT8, yh.t);
    std::vector<double> wh(12);
    for (int i = 0; i < 12; i++) wh[i] = std::max(-128.0, std::min(127.0, std::floor(static_cast<double>(static_cast<float>(H[i]) * 2.25f))));
    compare("AscendQuant float16 strided [4, 3], sqrtMode, floor", read(yh), wh, 0);
    /* V3: bfloat16 [2, 3, 4], axis -2 (scale [3], offset [1]), trunc */
    std::vector<double> B = values(24, ACL_BF16, 4), S3 = f16s({4, -2, 0.75}, ACL_BF16);
    Dev xb = make({2, 3, 4}, ACL_BF16, B), sb = make({3}, ACL_BF16, S3), ob = make({1}, ACL_BF16, {0.5});
    Dev yb = make({2, 3, 4}, ACL_INT8, {0});
    RUN(S, aclnnAscendQuantV3, xb.t, sb.t, ob.t, false, "trunc", ACL_INT8, -2, yb.t);
    std::vector<double> wb(24);
    for (int i = 0; i < 24; i++) {
        float v = static_cast<float>(B[i]) * static_cast<float>(S3[(i / 4) % 3]) + 0.5f;
        wb[i] = std::max(-128.0, std::min(127.0, std::trunc(static_cast<double>(v))));
    }
    compare("AscendQuantV3 bfloat16 [2, 3, 4], axis -2, trunc", read(yb), wb, 0);
    /* errors */
    Dev yi = make({3, 8}, ACL_INT32, {0}), s5 = make({5}, ACL_FLOAT, {1}), xi = make({3, 8}, ACL_INT32, {1});
    expect_code("AscendQuant null x", aclnnAscendQuantGetWorkspaceSize(nullptr, s.t, o.t, false, "round", 2, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AscendQuant null roundMode", aclnnAscendQuantGetWorkspaceSize(x.t, s.t, o.t, false, nullptr, 2, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AscendQuant roundMode \"nearest\"",
                aclnnAscendQuantGetWorkspaceSize(x.t, s.t, o.t, false, "nearest", 2, y.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AscendQuant dstType 29 (INT4)", aclnnAscendQuantGetWorkspaceSize(x.t, s.t, o.t, false, "round", 29, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AscendQuant int32 y for dstType 2", aclnnAscendQuantGetWorkspaceSize(x.t, s.t, o.t, false, "round", 2, yi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AscendQuant scale [5] for x [3, 8]", aclnnAscendQuantGetWorkspaceSize(x.t, s5.t, o.t, false, "round", 2, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AscendQuant int32 x", aclnnAscendQuantGetWorkspaceSize(xi.t, s.t, o.t, false, "round", 2, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AscendQuant float16 scale of a bfloat16 x",
                aclnnAscendQuantGetWorkspaceSize(xb.t, sh.t, nullptr, false, "round", 2, yb.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AscendQuantV3 axis 0 of a 3-D x", aclnnAscendQuantV3GetWorkspaceSize(xb.t, sb.t, ob.t, false, "round", 2, 0, yb.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &s, &o, &y, &xh, &sh, &yh, &xb, &sb, &ob, &yb, &yi, &s5, &xi}) release(*d);
    printf("ok ascend quant\n");
}

/* ---------------------------------------------------------------- DynamicQuant */

/* rows of length h: symmetric (offset null) or asymmetric per-row quantisation */
static void dyn_ref(const std::vector<double> &X, const std::vector<double> *sm, int64_t h, bool asym,
                    std::vector<double> &y, std::vector<double> &sc, std::vector<double> &of) {
    int64_t rows = static_cast<int64_t>(X.size()) / h;
    y.assign(X.size(), 0);
    sc.assign(rows, 0);
    of.assign(rows, 0);
    for (int64_t r = 0; r < rows; r++) {
        std::vector<float> v(h);
        for (int64_t c = 0; c < h; c++) v[c] = static_cast<float>(X[r * h + c]) * (sm ? static_cast<float>((*sm)[c]) : 1.0f);
        float s, off = 0;
        if (!asym) {
            float m = 0;
            for (float e : v) m = std::max(m, std::fabs(e));
            s = m / 127.0f;
        } else {
            float mx = -INFINITY, mn = INFINITY;
            for (float e : v) mx = std::max(mx, e), mn = std::min(mn, e);
            s = (mx - mn) / 255.0f;
            off = s == 0 ? 0 : 127.0f - mx / s;
        }
        sc[r] = s;
        of[r] = off;
        for (int64_t c = 0; c < h; c++) y[r * h + c] = q8(s == 0 ? off : v[c] / s + off);
    }
}

static void dynamic_quant() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* float16 [4, 16]; row 2 all zero (scale 0, y 0) */
    std::vector<double> X = values(64, ACL_FLOAT16, 5);
    for (int c = 0; c < 16; c++) X[2 * 16 + c] = 0;
    Dev x = make({4, 16}, ACL_FLOAT16, X), y = make({4, 16}, ACL_INT8, {0}), s = make({4}, ACL_FLOAT, {0});
    RUN(S, aclnnDynamicQuant, x.t, nullptr, y.t, s.t);
    std::vector<double> wy, wsc, wof;
    dyn_ref(X, nullptr, 16, false, wy, wsc, wof);
    compare("DynamicQuant float16 [4, 16] y (a zero row gives 0)", read(y), wy, 0);
    compare("DynamicQuant float16 [4, 16] scale = row max |x| / 127", read(s), wsc, 1e-7);
    /* bfloat16 strided [2, 3, 8] with smoothScales */
    std::vector<double> B = values(48, ACL_BF16, 6), Sm = f16s({0.5, 1, 2, 0.25, 1.5, 3, 0.75, 1}, ACL_BF16);
    Dev xb = make({2, 3, 8}, ACL_BF16, B, STRIDED), sm = make({8}, ACL_BF16, Sm), yb = make({2, 3, 8}, ACL_INT8, {0});
    Dev sb = make({2, 3}, ACL_FLOAT, {0});
    RUN(S, aclnnDynamicQuant, xb.t, sm.t, yb.t, sb.t);
    dyn_ref(B, &Sm, 8, false, wy, wsc, wof);
    compare("DynamicQuant bfloat16 strided [2, 3, 8] with smoothScales, y", read(yb), wy, 0);
    compare("DynamicQuant bfloat16 strided [2, 3, 8] with smoothScales, scale", read(sb), wsc, 1e-7);
    /* V2 asymmetric (offsetOut), float16 [3, 10] */
    std::vector<double> A = values(30, ACL_FLOAT16, 7);
    Dev xa = make({3, 10}, ACL_FLOAT16, A), ya = make({3, 10}, ACL_INT8, {0}), sa = make({3}, ACL_FLOAT, {0});
    Dev oa = make({3}, ACL_FLOAT, {0});
    RUN(S, aclnnDynamicQuantV2, xa.t, nullptr, nullptr, 2, ya.t, sa.t, oa.t);
    dyn_ref(A, nullptr, 10, true, wy, wsc, wof);
    compare("DynamicQuantV2 asymmetric float16 [3, 10], y", read(ya), wy, 0);
    compare("DynamicQuantV2 asymmetric, scale = (max - min) / 255", read(sa), wsc, 1e-7);
    compare("DynamicQuantV2 asymmetric, offset = 127 - max / scale", read(oa), wof, 1e-6);
    /* V2 symmetric (offsetOut null) equals V1 */
    Dev y2 = make({4, 16}, ACL_INT8, {0}), s2 = make({4}, ACL_FLOAT, {0});
    RUN(S, aclnnDynamicQuantV2, x.t, nullptr, nullptr, 2, y2.t, s2.t, nullptr);
    compare("DynamicQuantV2 symmetric equals DynamicQuant", read(y2), read(y), 0);
    /* errors */
    Dev xf = make({4, 16}, ACL_FLOAT, {1}), sm5 = make({5}, ACL_FLOAT16, {1}), yi = make({4, 16}, ACL_INT32, {0});
    Dev s3 = make({3}, ACL_FLOAT, {0}), gi = make({2}, ACL_INT32, {2, 4}), x1 = make({16}, ACL_FLOAT16, {1});
    expect_code("DynamicQuant null x", aclnnDynamicQuantGetWorkspaceSize(nullptr, nullptr, y.t, s.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("DynamicQuant null scaleOut", aclnnDynamicQuantGetWorkspaceSize(x.t, nullptr, y.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("DynamicQuant float x", aclnnDynamicQuantGetWorkspaceSize(xf.t, nullptr, y.t, s.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuant 1-D x", aclnnDynamicQuantGetWorkspaceSize(x1.t, nullptr, y.t, s.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuant smoothScales [5] for h 16", aclnnDynamicQuantGetWorkspaceSize(x.t, sm5.t, y.t, s.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuant int32 yOut", aclnnDynamicQuantGetWorkspaceSize(x.t, nullptr, yi.t, s.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuant scaleOut [3] for 4 rows", aclnnDynamicQuantGetWorkspaceSize(x.t, nullptr, y.t, s3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV2 groupIndexOptional without smoothScalesOptional",
                aclnnDynamicQuantV2GetWorkspaceSize(x.t, nullptr, gi.t, 2, y.t, s.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV2 dstType 29 (INT4)", aclnnDynamicQuantV2GetWorkspaceSize(x.t, nullptr, nullptr, 29, y.t, s.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &y, &s, &xb, &sm, &yb, &sb, &xa, &ya, &sa, &oa, &y2, &s2, &xf, &sm5, &yi, &s3, &gi, &x1}) release(*d);
    printf("ok dynamic quant\n");
}

/* ---------------------------------------------------------------- MoeGatingTopKSoftmax */

static void gating_ref(const std::vector<double> &X, int64_t rows, int64_t e, int64_t k, const std::vector<double> *fin,
                       std::vector<double> &y, std::vector<double> &ei, std::vector<double> &ri) {
    y.clear(), ei.clear(), ri.clear();
    std::vector<double> p(e);
    for (int64_t r = 0; r < rows; r++) {
        double m = -INFINITY, sum = 0;
        for (int64_t c = 0; c < e; c++) m = std::max(m, X[r * e + c]);
        for (int64_t c = 0; c < e; c++) sum += p[c] = std::exp(X[r * e + c] - m);
        for (auto &v : p) v /= sum;
        std::vector<int64_t> idx(e);
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
        for (int64_t j = 0; j < k; j++) {
            y.push_back(p[idx[j]]);
            ei.push_back(fin && (*fin)[r] != 0 ? e : idx[j]);
            ri.push_back(j * rows + r);
        }
    }
}

static void moe_gating() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    std::vector<double> X = values(30, ACL_FLOAT, 8), F = {0, 1, 0, 0, 1};
    Dev x = make({5, 6}, ACL_FLOAT, X, TRANSPOSED), f = make({5}, ACL_BOOL, F);
    Dev y = make({5, 2}, ACL_FLOAT, {0}), e = make({5, 2}, ACL_INT32, {0}), r = make({5, 2}, ACL_INT32, {0});
    RUN(S, aclnnMoeGatingTopKSoftmax, x.t, f.t, 2, y.t, e.t, r.t);
    std::vector<double> wy, we, wr;
    gating_ref(X, 5, 6, 2, &F, wy, we, wr);
    compare("MoeGatingTopKSoftmax float [5, 6] transposed, k 2: values", read(y), wy, 1e-6);
    compare("MoeGatingTopKSoftmax: experts (finished rows give 6)", read(e), we, 0);
    compare("MoeGatingTopKSoftmax: rowIdx[r][j] = j * rows + r", read(r), wr, 0);
    /* bfloat16 [2, 3, 4], k = 4 (all experts), no finished */
    std::vector<double> B = values(24, ACL_BF16, 9);
    Dev xb = make({2, 3, 4}, ACL_BF16, B), yb = make({2, 3, 4}, ACL_BF16, {0}), eb = make({2, 3, 4}, ACL_INT32, {0});
    Dev rb = make({2, 3, 4}, ACL_INT32, {0});
    RUN(S, aclnnMoeGatingTopKSoftmax, xb.t, nullptr, 4, yb.t, eb.t, rb.t);
    gating_ref(B, 6, 4, 4, nullptr, wy, we, wr);
    compare("MoeGatingTopKSoftmax bfloat16 [2, 3, 4], k 4: values", read(yb), f16s(wy, ACL_BF16), 1e-2);
    compare("MoeGatingTopKSoftmax bfloat16: experts", read(eb), we, 0);
    compare("MoeGatingTopKSoftmax bfloat16: rowIdx", read(rb), wr, 0);
    /* V2, renorm 1: the top 3 of the raw row, then the softmax over those 3 */
    Dev y3 = make({5, 3}, ACL_FLOAT, {0}), e3 = make({5, 3}, ACL_INT32, {0}), none = make({0}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeGatingTopKSoftmaxV2, x.t, f.t, 3, 1, true, y3.t, e3.t, none.t);
    std::vector<double> wy3, we3;
    for (int r = 0; r < 5; r++) {
        std::vector<int> idx(6);
        std::iota(idx.begin(), idx.end(), 0);
        std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return X[r * 6 + a] > X[r * 6 + b]; });
        double m = X[r * 6 + idx[0]], sum = 0;
        for (int j = 0; j < 3; j++) sum += std::exp(X[r * 6 + idx[j]] - m);
        for (int j = 0; j < 3; j++) {
            wy3.push_back(std::exp(X[r * 6 + idx[j]] - m) / sum);
            we3.push_back(F[r] != 0 ? 6 : idx[j]);
        }
    }
    compare("MoeGatingTopKSoftmaxV2 renorm 1: softmax over the top 3", read(y3), wy3, 1e-6);
    compare("MoeGatingTopKSoftmaxV2 renorm 1: experts", read(e3), we3, 0);
    /* V2, renorm 0 with the softmax output: V1's values and the whole softmax */
    Dev y2 = make({5, 2}, ACL_FLOAT, {0}), e2 = make({5, 2}, ACL_INT32, {0}), sm = make({5, 6}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeGatingTopKSoftmaxV2, x.t, f.t, 2, 0, true, y2.t, e2.t, sm.t);
    gating_ref(X, 5, 6, 2, &F, wy, we, wr);
    compare("MoeGatingTopKSoftmaxV2 renorm 0 equals V1", read(y2), wy, 1e-6);
    std::vector<double> wsm(30);
    for (int r = 0; r < 5; r++) {
        double m = -INFINITY, sum = 0;
        for (int c = 0; c < 6; c++) m = std::max(m, X[r * 6 + c]);
        for (int c = 0; c < 6; c++) sum += std::exp(X[r * 6 + c] - m);
        for (int c = 0; c < 6; c++) wsm[r * 6 + c] = std::exp(X[r * 6 + c] - m) / sum;
    }
    compare("MoeGatingTopKSoftmaxV2 softmaxResultOut", read(sm), wsm, 1e-6);
    expect_code("MoeGatingTopKSoftmaxV2 renorm 2", aclnnMoeGatingTopKSoftmaxV2GetWorkspaceSize(x.t, f.t, 2, 2, false, y2.t, e2.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeGatingTopKSoftmaxV2 softmax flag without the output", aclnnMoeGatingTopKSoftmaxV2GetWorkspaceSize(x.t, f.t, 2, 0, true, y2.t, e2.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&y3, &e3, &none, &y2, &e2, &sm}) release(*d);
    /* errors */
    Dev fi = make({5}, ACL_INT32, {0}), ef = make({5, 2}, ACL_FLOAT, {0}), x1 = make({6}, ACL_FLOAT, {0});
    expect_code("MoeGatingTopKSoftmax null x", aclnnMoeGatingTopKSoftmaxGetWorkspaceSize(nullptr, f.t, 2, y.t, e.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeGatingTopKSoftmax k 7 of 6 experts", aclnnMoeGatingTopKSoftmaxGetWorkspaceSize(x.t, f.t, 7, y.t, e.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeGatingTopKSoftmax k 3 for yOut [5, 2]", aclnnMoeGatingTopKSoftmaxGetWorkspaceSize(x.t, f.t, 3, y.t, e.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeGatingTopKSoftmax int32 finished", aclnnMoeGatingTopKSoftmaxGetWorkspaceSize(x.t, fi.t, 2, y.t, e.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeGatingTopKSoftmax float expertIdxOut", aclnnMoeGatingTopKSoftmaxGetWorkspaceSize(x.t, f.t, 2, y.t, ef.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeGatingTopKSoftmax 1-D x", aclnnMoeGatingTopKSoftmaxGetWorkspaceSize(x1.t, nullptr, 2, y.t, e.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &f, &y, &e, &r, &xb, &yb, &eb, &rb, &fi, &ef, &x1}) release(*d);
    printf("ok moe gating top k softmax\n");
}

/* ---------------------------------------------------------------- QuantMatmul */

static std::vector<double> int_mm(const std::vector<double> &A, const std::vector<double> &B, int64_t m, int64_t k, int64_t n) {
    std::vector<double> c(m * n, 0);
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) c[i * n + j] += A[i * k + p] * B[p * n + j];
    return c;
}

static void quant_matmul() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t m = 3, k = 16, n = 5;
    /* TransQuantParamV2: scale and offset into the 64-bit parameter */
    std::vector<double> Sc = {0.013, 0.0071, 0.02, 0.5, 0.003}, Of = {3, -4, 0.5, 255.7, -300};
    Dev sc = make({n}, ACL_FLOAT, Sc), of = make({n}, ACL_FLOAT, Of), qp = make({n}, ACL_INT64, {0}), qs = make({n}, ACL_INT64, {0});
    RUN(S, aclnnTransQuantParamV2, sc.t, of.t, qp.t);
    RUN(S, aclnnTransQuantParamV2, sc.t, nullptr, qs.t);
    std::vector<double> wp(n), wsq(n);
    for (int j = 0; j < n; j++) {
        uint64_t base = (bits(static_cast<float>(Sc[j])) & 0xFFFFE000u) | (1ull << 46);
        int64_t o = static_cast<int64_t>(std::nearbyint(static_cast<float>(Of[j])));
        o = std::max<int64_t>(-256, std::min<int64_t>(255, o));
        wsq[j] = static_cast<double>(base);
        wp[j] = static_cast<double>((base & 0x4000FFFFFFFFull) | ((static_cast<uint64_t>(o) & 0x1FF) << 37));
    }
    compare("TransQuantParamV2 scale + offset bits", read(qp), wp, 0);
    compare("TransQuantParamV2 scale bits", read(qs), wsq, 0);
    /* V4: int8 x1 [3, 16] @ transposed x2 [16, 5], UINT64-style scale, int32 bias, float16 out */
    std::vector<double> A = values(m * k, ACL_INT8, 10), B = values(k * n, ACL_INT8, 11), Bi = {100, -50, 7, 0, -1000};
    Dev x1 = make({m, k}, ACL_INT8, A), x2 = make({k, n}, ACL_INT8, B, TRANSPOSED), bias = make({n}, ACL_INT32, Bi);
    Dev o16 = make({m, n}, ACL_FLOAT16, {0});
    RUN(S, aclnnQuantMatmulV4, x1.t, x2.t, qs.t, nullptr, nullptr, bias.t, false, false, o16.t);
    std::vector<double> acc = int_mm(A, B, m, k, n), w16(m * n);
    for (int64_t i = 0; i < m * n; i++)
        w16[i] = as_type(static_cast<float>(acc[i] + Bi[i % n]) * trunc19(static_cast<float>(Sc[i % n])), ACL_FLOAT16);
    compare("QuantMatmulV4 int8 @ transposed int8, quant param, int32 bias -> float16", read(o16), w16, 1e-3);
    /* V3: int8 out, offset from the parameter */
    Dev o8 = make({m, n}, ACL_INT8, {0});
    RUN(S, aclnnQuantMatmulV3, x1.t, x2.t, qp.t, nullptr, nullptr, false, false, o8.t);
    std::vector<double> w8(m * n);
    for (int64_t i = 0; i < m * n; i++) {
        int64_t o = static_cast<int64_t>(std::nearbyint(static_cast<float>(Of[i % n])));
        o = std::max<int64_t>(-256, std::min<int64_t>(255, o));
        w8[i] = q8(static_cast<float>(acc[i]) * trunc19(static_cast<float>(Sc[i % n])) + static_cast<float>(o));
    }
    compare("QuantMatmulV3 int8 out, round((acc) * scale + offset)", read(o8), w8, 0);
    /* V5: pertoken x1Scale [m], float x2Scale [n], float bias, bfloat16 out; transposeX2 */
    std::vector<double> Pt = {0.5, 0.25, 2}, Fb = {0.5, -1, 2, 0, 3};
    Dev x2t = make({n, k}, ACL_INT8, [&] {
        std::vector<double> t(n * k);
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) t[j * k + p] = B[p * n + j];
        return t;
    }());
    Dev pt = make({m}, ACL_FLOAT, Pt), fb = make({n}, ACL_FLOAT, Fb), obf = make({m, n}, ACL_BF16, {0});
    RUN(S, aclnnQuantMatmulV5, x1.t, x2t.t, pt.t, sc.t, nullptr, nullptr, nullptr, nullptr, fb.t, false, true, 0, obf.t);
    std::vector<double> wbf(m * n);
    for (int64_t i = 0; i < m * n; i++)
        wbf[i] = as_type(static_cast<float>(acc[i]) * static_cast<float>(Sc[i % n]) * static_cast<float>(Pt[i / n]) +
                             static_cast<float>(Fb[i % n]),
                         ACL_BF16);
    compare("QuantMatmulV5 pertoken x1Scale, float x2Scale, float bias, transposeX2 -> bfloat16", read(obf), wbf, 1e-2);
    /* V5: int32 out = acc + bias (batched x1 [2, 3, 16], x2 [16, 5]) */
    std::vector<double> A2 = values(2 * m * k, ACL_INT8, 12);
    Dev x1b = make({2, m, k}, ACL_INT8, A2, STRIDED), s1 = make({1}, ACL_FLOAT, {1}), o32 = make({2, m, n}, ACL_INT32, {0});
    RUN(S, aclnnQuantMatmulV5, x1b.t, x2.t, nullptr, s1.t, nullptr, nullptr, nullptr, nullptr, bias.t, false, false, 0, o32.t);
    std::vector<double> w32;
    for (int b = 0; b < 2; b++) {
        std::vector<double> Ab(A2.begin() + b * m * k, A2.begin() + (b + 1) * m * k);
        std::vector<double> c = int_mm(Ab, B, m, k, n);
        for (int64_t i = 0; i < m * n; i++) w32.push_back(c[i] + Bi[i % n]);
    }
    compare("QuantMatmulV5 batched strided x1 [2, 3, 16] -> int32 acc + bias", read(o32), w32, 0);
    /* errors */
    Dev xh = make({m, k}, ACL_FLOAT16, {1}), x2k = make({8, n}, ACL_INT8, {1}), of32 = make({m, n}, ACL_FLOAT, {0});
    expect_code("QuantMatmulV4 null x2", aclnnQuantMatmulV4GetWorkspaceSize(x1.t, nullptr, qs.t, nullptr, nullptr, nullptr, false, false, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("QuantMatmulV4 float16 x1", aclnnQuantMatmulV4GetWorkspaceSize(xh.t, x2.t, qs.t, nullptr, nullptr, nullptr, false, false, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantMatmulV4 k 16 against 8", aclnnQuantMatmulV4GetWorkspaceSize(x1.t, x2k.t, qs.t, nullptr, nullptr, nullptr, false, false, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantMatmulV4 float out with a quant param", aclnnQuantMatmulV4GetWorkspaceSize(x1.t, x2.t, qs.t, nullptr, nullptr, nullptr, false, false, of32.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantMatmulV4 pertoken scale with int8 out", aclnnQuantMatmulV4GetWorkspaceSize(x1.t, x2.t, qs.t, nullptr, pt.t, nullptr, false, false, o8.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantMatmulV5 groupSize 5", aclnnQuantMatmulV5GetWorkspaceSize(x1.t, x2.t, nullptr, qs.t, nullptr, nullptr, nullptr, nullptr, nullptr, false, false, 5, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantMatmulV5 yScale given", aclnnQuantMatmulV5GetWorkspaceSize(x1.t, x2.t, nullptr, qs.t, qs.t, nullptr, nullptr, nullptr, nullptr, false, false, 0, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TransQuantParamV2 null scale", aclnnTransQuantParamV2GetWorkspaceSize(nullptr, of.t, qp.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("TransQuantParamV2 int32 out", aclnnTransQuantParamV2GetWorkspaceSize(sc.t, of.t, o32.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&sc, &of, &qp, &qs, &x1, &x2, &bias, &o16, &o8, &x2t, &pt, &fb, &obf, &x1b, &s1, &o32, &xh, &x2k, &of32}) release(*d);
    printf("ok quant matmul\n");
}

/* ---------------------------------------------------------------- WeightQuantBatchMatmul */

static void weight_quant_matmul() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t m = 3, k = 64, n = 8;
    /* V2: float16 x, int8 weight, per-channel scale and offset, float16 bias */
    std::vector<double> X = values(m * k, ACL_FLOAT16, 13), W = values(k * n, ACL_INT8, 14);
    std::vector<double> Sc(n), Of(n), Bi = values(n, ACL_FLOAT16, 15);
    for (int j = 0; j < n; j++) Sc[j] = as_type(0.01 + 0.003 * j, ACL_FLOAT16), Of[j] = as_type(j - 3.5, ACL_FLOAT16);
    Dev x = make({m, k}, ACL_FLOAT16, X), w = make({k, n}, ACL_INT8, W), s = make({n}, ACL_FLOAT16, Sc);
    Dev o = make({n}, ACL_FLOAT16, Of), b = make({n}, ACL_FLOAT16, Bi), y = make({m, n}, ACL_FLOAT16, {0});
    RUN(S, aclnnWeightQuantBatchMatmulV2, x.t, w.t, s.t, o.t, nullptr, nullptr, b.t, 0, y.t);
    std::vector<double> want(m * n);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = Bi[j];
            for (int64_t p = 0; p < k; p++)
                acc += X[i * k + p] * as_type(as_type(W[p * n + j] + Of[j], ACL_FLOAT16) * Sc[j], ACL_FLOAT16);
            want[i * n + j] = as_type(acc, ACL_FLOAT16);
        }
    compare("WeightQuantBatchMatmulV2 float16, per-channel scale/offset, bias", read(y), want, 1e-2);
    /* V3: bfloat16 x, transposed weight, per-group (32) scale [n, k / 32], INT8 output */
    std::vector<double> Xb = values(m * k, ACL_BF16, 16), G(n * 2);
    for (int64_t i = 0; i < n * 2; i++) G[i] = as_type(0.004 * (1 + i % 5), ACL_BF16);
    Dev xb = make({m, k}, ACL_BF16, Xb), wt = make({k, n}, ACL_INT8, W, TRANSPOSED), g = make({n, 2}, ACL_BF16, G);
    std::vector<double> Qs = {0.5}, Qo = {2};
    Dev qsf = make({1}, ACL_FLOAT, Qs), qof = make({1}, ACL_FLOAT, Qo), qp = make({1}, ACL_INT64, {0});
    RUN(S, aclnnTransQuantParamV2, qsf.t, nullptr, qp.t);
    Dev y8 = make({m, n}, ACL_INT8, {0});
    RUN(S, aclnnWeightQuantBatchMatmulV3, xb.t, wt.t, g.t, nullptr, qp.t, qof.t, nullptr, 32, 1, y8.t);
    std::vector<double> w8(m * n);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0;
            for (int64_t p = 0; p < k; p++) acc += Xb[i * k + p] * as_type(W[p * n + j] * G[j * 2 + p / 32], ACL_BF16);
            w8[i * n + j] = q8(static_cast<float>(acc) * 0.5f + 2.0f);
        }
    within_one("WeightQuantBatchMatmulV3 bfloat16, transposed weight, group 32, INT8 requantised", read(y8), w8);
    /* errors */
    Dev wi = make({k, n}, ACL_INT32, {1}), bf = make({n}, ACL_FLOAT, {0}), s3 = make({3}, ACL_FLOAT16, {1});
    expect_code("WeightQuantBatchMatmulV2 null weight", aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(x.t, nullptr, s.t, o.t, nullptr, nullptr, b.t, 0, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("WeightQuantBatchMatmulV2 int32 weight (int4 pack)", aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(x.t, wi.t, s.t, o.t, nullptr, nullptr, b.t, 0, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("WeightQuantBatchMatmulV2 antiquantGroupSize 16", aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(x.t, w.t, s.t, nullptr, nullptr, nullptr, nullptr, 16, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("WeightQuantBatchMatmulV2 antiquantScale [3]", aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(x.t, w.t, s3.t, nullptr, nullptr, nullptr, nullptr, 0, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("WeightQuantBatchMatmulV2 float bias of a float16 x", aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(x.t, w.t, s.t, nullptr, nullptr, nullptr, bf.t, 0, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("WeightQuantBatchMatmulV3 innerPrecise 2", aclnnWeightQuantBatchMatmulV3GetWorkspaceSize(x.t, w.t, s.t, nullptr, nullptr, nullptr, nullptr, 0, 2, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("WeightQuantBatchMatmulV2 float16 y with quantScale", aclnnWeightQuantBatchMatmulV2GetWorkspaceSize(x.t, w.t, s.t, nullptr, qp.t, nullptr, nullptr, 0, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &w, &s, &o, &b, &y, &xb, &wt, &g, &qsf, &qof, &qp, &y8, &wi, &bf, &s3}) release(*d);
    printf("ok weight quant batch matmul\n");
}

/* ---------------------------------------------------------------- GroupedMatmul */

static aclTensorList *list(std::initializer_list<Dev *> ds) {
    std::vector<aclTensor *> v;
    for (Dev *d : ds) v.push_back(d->t), d->t = nullptr; /* the list owns them */
    return aclCreateTensorList(v.data(), v.size());
}

static void grouped_matmul() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* V4: x float16 [7, 8] split along M by cumulative groupList {3, 3, 7} (group 1 empty),
     * weight [3, 8, 5], bias [3, 5], one output [7, 5] */
    std::vector<double> X = values(56, ACL_FLOAT16, 17), W = values(120, ACL_FLOAT16, 18), Bi = values(15, ACL_FLOAT16, 19);
    Dev x = make({7, 8}, ACL_FLOAT16, X), w = make({3, 8, 5}, ACL_FLOAT16, W), b = make({3, 5}, ACL_FLOAT16, Bi);
    Dev gl = make({3}, ACL_INT64, {3, 3, 7}), y = make({7, 5}, ACL_FLOAT16, {0});
    void *ymem = y.mem;
    aclTensorList *xl = list({&x}), *wl = list({&w}), *bl = list({&b}), *yl = list({&y});
    RUN(S, aclnnGroupedMatmulV4, xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 0, 0,
        yl, nullptr, nullptr);
    std::vector<double> want(35);
    const int grp[7] = {0, 0, 0, 2, 2, 2, 2};
    for (int i = 0; i < 7; i++)
        for (int j = 0; j < 5; j++) {
            double acc = Bi[grp[i] * 5 + j];
            for (int p = 0; p < 8; p++) acc += X[i * 8 + p] * W[grp[i] * 40 + p * 5 + j];
            want[i * 5 + j] = as_type(acc, ACL_FLOAT16);
        }
    {
        Dev view = y;
        view.mem = ymem;
        compare("GroupedMatmulV4 split M, cumulative groupList {3, 3, 7}, [E, K, N] weight, one output", read(view), want, 1e-2);
    }
    /* errors (on the same lists) */
    Dev gi = make({3}, ACL_INT32, {3, 3, 7});
    /* actType (GMMActType 0 none, 1 relu, 2 gelu_tanh, 3 gelu_err_func, 4 fast_gelu, 5 silu):
       CANN computes the activation only in the A8W8 modes with FLOAT16/BFLOAT16 out; the
       non-quantised mode takes 0, 3 is refused everywhere, and so is anything outside 0..5 */
    for (int64_t act : {1, 2, 3, 4, 5, -1, 6}) {
        std::string what = "GroupedMatmulV4 non-quantised actType " + std::to_string(act);
        expect_code(what.c_str(), aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 0, act, yl, nullptr, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        what = "GroupedMatmulV5 non-quantised actType " + std::to_string(act);
        expect_code(what.c_str(), aclnnGroupedMatmulV5GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 0, act, nullptr, yl, nullptr, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
    }
    expect_code("GroupedMatmulV4 groupType 2 (K)", aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 2, 0, 0, yl, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupedMatmulV4 int32 groupList", aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gi.t, nullptr, nullptr, nullptr, 3, 0, 0, 0, yl, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupedMatmulV4 null groupList with groupType 0", aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 3, 0, 0, 0, yl, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GroupedMatmulV4 scaleOptional given (quantised)", aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bl, bl, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 0, 0, yl, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupedMatmulV4 splitItem 0 with one output for 3 groups", aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 0, 0, 0, 0, yl, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupedMatmulV4 null x", aclnnGroupedMatmulV4GetWorkspaceSize(nullptr, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 0, 0, yl, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(bl), aclDestroyTensorList(yl);
    aclrtFree(ymem);
    for (Dev *d : {&x, &w, &b, &gl, &gi}) release(*d);
    /* V5: float x [6, 8], counts groupList {2, 4}, a list of two weights (the second
     * transposed), per-group outputs [2, 4] and [4, 4] */
    std::vector<double> X2 = values(48, ACL_FLOAT, 20), W0 = values(32, ACL_FLOAT, 21), W1 = values(32, ACL_FLOAT, 22);
    Dev x2 = make({6, 8}, ACL_FLOAT, X2), w0 = make({8, 4}, ACL_FLOAT, W0), w1 = make({8, 4}, ACL_FLOAT, W1, TRANSPOSED);
    Dev gc = make({2}, ACL_INT64, {2, 4}), y0 = make({2, 4}, ACL_FLOAT, {0}), y1 = make({4, 4}, ACL_FLOAT, {0});
    void *m0 = y0.mem, *m1 = y1.mem;
    Dev r0 = y0, r1 = y1;
    aclTensorList *x2l = list({&x2}), *w2l = list({&w0, &w1}), *y2l = list({&y0, &y1});
    int64_t tune[1] = {0};
    aclIntArray *tc = aclCreateIntArray(tune, 1);
    RUN(S, aclnnGroupedMatmulV5, x2l, w2l, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, gc.t, nullptr, nullptr, nullptr, 0, 0, 1, 0,
        tc, y2l, nullptr, nullptr);
    std::vector<double> a0(8), a1(16);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) {
            double acc = 0;
            for (int p = 0; p < 8; p++) acc += X2[i * 8 + p] * (i < 2 ? W0 : W1)[p * 4 + j];
            (i < 2 ? a0[i * 4 + j] : a1[(i - 2) * 4 + j]) = as_type(acc, ACL_FLOAT);
        }
    r0.mem = m0, r1.mem = m1;
    compare("GroupedMatmulV5 counts groupList {2, 4}, weight list, output 0", read(r0), a0, 1e-5);
    compare("GroupedMatmulV5 counts groupList {2, 4}, weight list (transposed), output 1", read(r1), a1, 1e-5);
    aclDestroyTensorList(x2l), aclDestroyTensorList(w2l), aclDestroyTensorList(y2l);
    aclDestroyIntArray(tc);
    aclrtFree(m0), aclrtFree(m1);
    release(gc);
    /* groupType -1: two independent products of float16 x [2, 3, 8] and [4, 8] */
    std::vector<double> P = values(48, ACL_FLOAT16, 23), Q = values(32, ACL_FLOAT16, 24), U = values(24, ACL_FLOAT16, 25),
                        V = values(48, ACL_FLOAT16, 26);
    Dev p = make({2, 3, 8}, ACL_FLOAT16, P), q = make({8, 4}, ACL_FLOAT16, Q), u = make({3, 8}, ACL_FLOAT16, U, STRIDED);
    Dev v = make({8, 6}, ACL_FLOAT16, V), yp = make({2, 3, 4}, ACL_FLOAT16, {0}), yu = make({3, 6}, ACL_FLOAT16, {0});
    Dev rp = yp, ru = yu;
    aclTensorList *pl = list({&p, &u}), *ql = list({&q, &v}), *yl2 = list({&yp, &yu});
    RUN(S, aclnnGroupedMatmulV4, pl, ql, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, -1, 0, 0,
        yl2, nullptr, nullptr);
    std::vector<double> wp(24), wu(18);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) {
            double acc = 0;
            for (int t = 0; t < 8; t++) acc += P[i * 8 + t] * Q[t * 4 + j];
            wp[i * 4 + j] = as_type(acc, ACL_FLOAT16);
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 6; j++) {
            double acc = 0;
            for (int t = 0; t < 8; t++) acc += U[i * 8 + t] * V[t * 6 + j];
            wu[i * 6 + j] = as_type(acc, ACL_FLOAT16);
        }
    compare("GroupedMatmulV4 groupType -1, x [2, 3, 8] @ [8, 4]", read(rp), wp, 1e-2);
    compare("GroupedMatmulV4 groupType -1, strided x [3, 8] @ [8, 6]", read(ru), wu, 1e-2);
    aclDestroyTensorList(pl), aclDestroyTensorList(ql), aclDestroyTensorList(yl2);
    aclrtFree(rp.mem), aclrtFree(ru.mem), aclrtFree(p.mem), aclrtFree(u.mem), aclrtFree(q.mem), aclrtFree(v.mem);
    aclrtFree(x2.mem), aclrtFree(w0.mem), aclrtFree(w1.mem);
    printf("ok grouped matmul\n");
}

/* ---------------------------------------------------------------- MoE routing */

static void moe_routing() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t n = 4, k = 2, h = 3, E = 4;
    std::vector<double> X = values(n * h, ACL_FLOAT, 27), Ei = {2, 0, 1, 2, 0, 2, 3, 1}, Ri(n * k);
    for (int r = 0; r < n; r++)
        for (int j = 0; j < k; j++) Ri[r * k + j] = j * n + r;
    Dev x = make({n, h}, ACL_FLOAT, X), ri = make({n, k}, ACL_INT32, Ri), ei = make({n, k}, ACL_INT32, Ei);
    Dev exr = make({n * k, h}, ACL_FLOAT, {0}), err = make({n * k}, ACL_INT32, {0}), eer = make({n * k}, ACL_INT32, {0});
    RUN(S, aclnnMoeInitRouting, x.t, ri.t, ei.t, n, exr.t, err.t, eer.t);
    std::vector<int> order(n * k);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return Ei[a] < Ei[b]; });
    std::vector<double> wee(n * k), wer(n * k), wex;
    for (int i = 0; i < n * k; i++) {
        wee[i] = Ei[order[i]];
        int64_t src = static_cast<int64_t>(Ri[order[i]]);
        wer[src] = i;
        for (int c = 0; c < h; c++) wex.push_back(X[(src % n) * h + c]);
    }
    compare("MoeInitRouting expandedExpertIdx (stable sort by expert)", read(eer), wee, 0);
    compare("MoeInitRouting expandedRowIdx[sortedRowIdx[i]] = i", read(err), wer, 0);
    compare("MoeInitRouting expandedX[i] = x[sortedRowIdx[i] % n]", read(exr), wex, 0);
    /* activeNum 1: only the first k sorted rows are gathered */
    Dev ex1 = make({k, h}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeInitRouting, x.t, ri.t, ei.t, 1, ex1.t, err.t, eer.t);
    compare("MoeInitRouting activeNum 1 gathers the first k sorted rows", read(ex1), std::vector<double>(wex.begin(), wex.begin() + k * h), 0);
    /* ComputeExpertTokens over the sorted experts {0, 0, 1, 1, 2, 2, 2, 3} with 6 experts */
    Dev tok = make({6}, ACL_INT32, {0});
    RUN(S, aclnnMoeComputeExpertTokens, eer.t, 6, tok.t);
    compare("MoeComputeExpertTokens: the end of each expert's rows", read(tok), {2, 4, 7, 8, 8, 8}, 0);
    /* FinalizeRouting V1 and V2 */
    std::vector<double> Sk = values(n * h, ACL_FLOAT, 28), Sk2 = values(n * h, ACL_FLOAT, 29), Bs = values(E * h, ACL_FLOAT, 30),
                        Sc = values(n * k, ACL_FLOAT, 31), Y = values(n * k * h, ACL_FLOAT, 32);
    Dev ey = make({n * k, h}, ACL_FLOAT, Y), s1 = make({n, h}, ACL_FLOAT, Sk), s2 = make({n, h}, ACL_FLOAT, Sk2);
    Dev bs = make({E, h}, ACL_FLOAT, Bs), sc = make({n, k}, ACL_FLOAT, Sc, TRANSPOSED), out = make({n, h}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeFinalizeRouting, ey.t, s1.t, s2.t, bs.t, sc.t, err.t, ei.t, out.t);
    std::vector<double> wo(n * h);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < h; c++) {
            float acc = static_cast<float>(Sk[i * h + c]) + static_cast<float>(Sk2[i * h + c]);
            for (int j = 0; j < k; j++) {
                int src = static_cast<int>(wer[i + j * n]);
                acc += static_cast<float>(Sc[i * k + j]) *
                       (static_cast<float>(Y[src * h + c]) + static_cast<float>(Bs[static_cast<int>(Ei[i * k + j]) * h + c]));
            }
            wo[i * h + c] = acc;
        }
    compare("MoeFinalizeRouting skip1 + skip2 + sum scales * (rows + bias)", read(out), wo, 1e-6);
    Dev out2 = make({n, h}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeFinalizeRoutingV2, ey.t, err.t, s1.t, s2.t, bs.t, sc.t, ei.t, 0, out2.t);
    compare("MoeFinalizeRoutingV2 dropPadMode 0 equals V1", read(out2), wo, 1e-6);
    Dev out3 = make({n, h}, ACL_FLOAT16, {0}), eyh = make({n * k, h}, ACL_FLOAT16, Y);
    RUN(S, aclnnMoeFinalizeRoutingV2, eyh.t, err.t, nullptr, nullptr, nullptr, nullptr, nullptr, 0, out3.t);
    std::vector<double> w3(n * h, 0);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < h; c++) {
            double acc = 0;
            for (int j = 0; j < k; j++) acc += as_type(Y[static_cast<int>(wer[i + j * n]) * h + c], ACL_FLOAT16);
            w3[i * h + c] = as_type(acc, ACL_FLOAT16);
        }
    compare("MoeFinalizeRoutingV2 float16, no optional inputs: the sum of the K rows", read(out3), w3, 1e-3);
    /* errors */
    Dev eif = make({n, k}, ACL_FLOAT, {0}), bad = make({n * k - 1}, ACL_INT32, {0});
    expect_code("MoeInitRouting null x", aclnnMoeInitRoutingGetWorkspaceSize(nullptr, ri.t, ei.t, n, exr.t, err.t, eer.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeInitRouting float expertIdx", aclnnMoeInitRoutingGetWorkspaceSize(x.t, ri.t, eif.t, n, exr.t, err.t, eer.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRouting activeNum -1", aclnnMoeInitRoutingGetWorkspaceSize(x.t, ri.t, ei.t, -1, exr.t, err.t, eer.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRouting expandedXOut rows for activeNum 1", aclnnMoeInitRoutingGetWorkspaceSize(x.t, ri.t, ei.t, 1, exr.t, err.t, eer.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeComputeExpertTokens numExperts 0", aclnnMoeComputeExpertTokensGetWorkspaceSize(eer.t, 0, tok.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeComputeExpertTokens out [6] for numExperts 5", aclnnMoeComputeExpertTokensGetWorkspaceSize(eer.t, 5, tok.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeFinalizeRouting null skip1", aclnnMoeFinalizeRoutingGetWorkspaceSize(ey.t, nullptr, s2.t, bs.t, sc.t, err.t, ei.t, out.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeFinalizeRoutingV2 dropPadMode 1 (drop pad)", aclnnMoeFinalizeRoutingV2GetWorkspaceSize(ey.t, err.t, s1.t, s2.t, bs.t, sc.t, ei.t, 1, out2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeFinalizeRoutingV2 expandedRowIdx of 7 for 8 rows", aclnnMoeFinalizeRoutingV2GetWorkspaceSize(ey.t, bad.t, s1.t, s2.t, bs.t, sc.t, ei.t, 0, out2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeFinalizeRoutingV2 bias without expertIdx", aclnnMoeFinalizeRoutingV2GetWorkspaceSize(ey.t, err.t, s1.t, nullptr, bs.t, sc.t, nullptr, 0, out2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeFinalizeRoutingV2 x2 without x1", aclnnMoeFinalizeRoutingV2GetWorkspaceSize(ey.t, err.t, nullptr, s2.t, nullptr, nullptr, nullptr, 0, out2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &ri, &ei, &exr, &err, &eer, &ex1, &tok, &ey, &s1, &s2, &bs, &sc, &out, &out2, &out3, &eyh, &eif, &bad}) release(*d);
    printf("ok moe routing\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    ascend_quant();
    dynamic_quant();
    moe_gating();
    quant_matmul();
    weight_quant_matmul();
    grouped_matmul();
    moe_routing();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
