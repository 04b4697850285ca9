/* Operators that model code reaches through torch_npu and CANN's documented examples, against
 * float64 host references written from the operator reference's formulas:
 * TransformBiasRescaleQkv, UpsampleBilinear2dBackwardV2, BinaryCrossEntropyWithLogits-
 * TargetBackward, Modulate (+Backward), AdaLayerNorm / AdaLayerNormV2 (+Backward),
 * ClippedSwiglu (+Grad), PdistForward, MultiScaleDeformableAttnFunction (+AttentionGrad) and
 * Sinkhorn; each with its documented argument errors (ACLNN_ERR_PARAM_NULLPTR /
 * ACLNN_ERR_PARAM_INVALID, and ACLNN_ERR_INNER_TILING_ERROR where the reference gives it).
 * Tolerances: float32 results are computed in float64 and rounded once, so 1e-5 relative
 * (sums of a few hundred terms at most); float16 results to 2e-3. Inputs include transposed
 * and strided views. */
#include <algorithm>
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_transform_bias_rescale_qkv.h"
#include "aclnnop/aclnn_upsample_bilinear_2d_backward_v2.h"
#include "aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h"
#include "aclnnop/aclnn_modulate.h"
#include "aclnnop/aclnn_modulate_backward.h"
#include "aclnnop/aclnn_ada_layer_norm.h"
#include "aclnnop/aclnn_ada_layer_norm_v2.h"
#include "aclnnop/aclnn_ada_layer_norm_backward.h"
#include "aclnnop/aclnn_clipped_swiglu.h"
#include "aclnnop/aclnn_clipped_swiglu_grad.h"
#include "aclnnop/aclnn_pdist_forward.h"
#include "aclnnop/aclnn_multi_scale_deformable_attn_function.h"
#include "aclnnop/aclnn_multi_scale_deformable_attention_grad.h"
#include "aclnnop/aclnn_sinkhorn.h"

static aclrtStream S;
static const int TILING_ERROR = 561002;

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
static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }
static double sigm(double v) { return 1.0 / (1.0 + std::exp(-v)); }
/* ln(1 + e^v) */
static double softplus(double v) { return std::log1p(std::exp(-std::fabs(v))) + std::max(v, 0.0); }

static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

/* ---- TransformBiasRescaleQkv ---- */

static void qkv() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int B = 2, T = 3, NH = 2, E = 4, D = NH * E;
    for (aclDataType dt : {ACL_FLOAT, ACL_FLOAT16}) {
        std::vector<double> X = values(B * T * 3 * D, dt, 1), Bi = values(3 * D, dt, 2);
        Dev x = make({B, T, 3 * D}, dt, X, STRIDED), b = make({3 * D}, dt, Bi);
        Dev q = make({B, NH, T, E}, dt, {0}), k = make({B, NH, T, E}, dt, {0}), v = make({B, NH, T, E}, dt, {0});
        RUN(S, aclnnTransformBiasRescaleQkv, x.t, b.t, NH, q.t, k.t, v.t);
        std::vector<double> want[3];
        for (int part = 0; part < 3; part++)
            for (int bi = 0; bi < B; bi++)
                for (int h = 0; h < NH; h++)
                    for (int t = 0; t < T; t++)
                        for (int e = 0; e < E; e++) {
                            int c = part * D + h * E + e;
                            double val = X[(bi * T + t) * 3 * D + c] + Bi[c];
                            want[part].push_back(as_type(part == 0 ? val / std::sqrt(double(E)) : val, dt));
                        }
        double tol = dt == ACL_FLOAT ? 1e-6 : 1e-3;
        compare(dt == ACL_FLOAT ? "TransformBiasRescaleQkv q (strided qkv)" : "TransformBiasRescaleQkv q f16", read(q), want[0], tol);
        compare("TransformBiasRescaleQkv k", read(k), want[1], tol);
        compare("TransformBiasRescaleQkv v", read(v), want[2], tol);
        if (dt == ACL_FLOAT) {
            expect_code("TransformBiasRescaleQkv null qkv",
                        aclnnTransformBiasRescaleQkvGetWorkspaceSize(nullptr, b.t, NH, q.t, k.t, v.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            Dev b2 = make({3 * D + 3}, dt, {0});
            expect_code("TransformBiasRescaleQkv qkvBias of the wrong length",
                        aclnnTransformBiasRescaleQkvGetWorkspaceSize(x.t, b2.t, NH, q.t, k.t, v.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            Dev bi = make({3 * D}, ACL_INT32, {0});
            expect_code("TransformBiasRescaleQkv int32 qkvBias",
                        aclnnTransformBiasRescaleQkvGetWorkspaceSize(x.t, bi.t, NH, q.t, k.t, v.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("TransformBiasRescaleQkv numHeads 3 (outputs for 2)",
                        aclnnTransformBiasRescaleQkvGetWorkspaceSize(x.t, b.t, 3, q.t, k.t, v.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            release(b2);
            release(bi);
        }
        for (Dev *d : {&x, &b, &q, &k, &v}) release(*d);
    }
    printf("ok qkv\n");
}

/* ---- UpsampleBilinear2dBackwardV2 ---- */

/* The source index and weight of output position o along one axis (the reference's formula,
 * the upper neighbour clamped to the input). */
static void src_of(int o, int in, int out, bool align, double scale, int *i0, int *i1, double *l1) {
    double s = align ? (out > 1 ? double(in - 1) / (out - 1) : 0) : (scale > 0 ? 1.0 / scale : double(in) / out);
    double x = align ? o * s : std::max(0.0, (o + 0.5) * s - 0.5);
    *i0 = std::min(static_cast<int>(x), in - 1);
    *i1 = *i0 + (*i0 < in - 1 ? 1 : 0);
    *l1 = x - *i0;
}

static void upsample() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int N = 1, C = 2, H = 3, W = 2, OH = 6, OW = 5;
    for (bool align : {false, true}) {
        double sh = align ? 0.0 : 2.0, sw = align ? 0.0 : 2.5;
        std::vector<double> G = values(N * C * OH * OW, ACL_FLOAT, 3);
        Dev g = make({N, C, OH, OW}, ACL_FLOAT, G, TRANSPOSED), o = make({N, C, H, W}, ACL_FLOAT, {0});
        aclIntArray *os = ia({OH, OW}), *is = ia({N, C, H, W});
        RUN(S, aclnnUpsampleBilinear2dBackwardV2, g.t, os, is, align, sh, sw, o.t);
        std::vector<double> want(N * C * H * W, 0.0);
        for (int nc = 0; nc < N * C; nc++)
            for (int y = 0; y < OH; y++)
                for (int x = 0; x < OW; x++) {
                    int h0, h1, w0, w1;
                    double lh, lw;
                    src_of(y, H, OH, align, sh, &h0, &h1, &lh);
                    src_of(x, W, OW, align, sw, &w0, &w1, &lw);
                    double gv = G[(nc * OH + y) * OW + x];
                    want[(nc * H + h0) * W + w0] += gv * (1 - lh) * (1 - lw);
                    want[(nc * H + h0) * W + w1] += gv * (1 - lh) * lw;
                    want[(nc * H + h1) * W + w0] += gv * lh * (1 - lw);
                    want[(nc * H + h1) * W + w1] += gv * lh * lw;
                }
        compare(align ? "UpsampleBilinear2dBackwardV2 align corners" : "UpsampleBilinear2dBackwardV2 scales (2, 2.5), transposed grad",
                read(o), want, 1e-5);
        if (!align) {
            aclIntArray *os3 = ia({OH, OW, 1});
            expect_code("UpsampleBilinear2dBackwardV2 outputSize of 3",
                        aclnnUpsampleBilinear2dBackwardV2GetWorkspaceSize(g.t, os3, is, align, sh, sw, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("UpsampleBilinear2dBackwardV2 null gradOut",
                        aclnnUpsampleBilinear2dBackwardV2GetWorkspaceSize(nullptr, os, is, align, sh, sw, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            Dev o16 = make({N, C, H, W}, ACL_FLOAT16, {0});
            expect_code("UpsampleBilinear2dBackwardV2 f16 out of a float gradOut",
                        aclnnUpsampleBilinear2dBackwardV2GetWorkspaceSize(g.t, os, is, align, sh, sw, o16.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            aclDestroyIntArray(os3);
            release(o16);
        }
        aclDestroyIntArray(os);
        aclDestroyIntArray(is);
        release(g);
        release(o);
    }
    printf("ok upsample\n");
}

/* ---- BinaryCrossEntropyWithLogitsTargetBackward ---- */

static void bce_target() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int R = 3, C = 4, N = R * C;
    std::vector<double> X = values(N, ACL_FLOAT, 4), T(N), Wt = values(C, ACL_FLOAT, 5, false, true),
                        P = values(C, ACL_FLOAT, 6, false, true), G = values(N, ACL_FLOAT, 7);
    for (int i = 0; i < N; i++) T[i] = as_type((i % 5) / 4.0, ACL_FLOAT);
    Dev x = make({R, C}, ACL_FLOAT, X, TRANSPOSED), t = make({R, C}, ACL_FLOAT, T);
    Dev w = make({C}, ACL_FLOAT, Wt), p = make({C}, ACL_FLOAT, P), g = make({R, C}, ACL_FLOAT, G);
    Dev o = make({R, C}, ACL_FLOAT, {0});
    RUN(S, aclnnBinaryCrossEntropyWithLogitsTargetBackward, g.t, x.t, t.t, w.t, p.t, 0, o.t);
    std::vector<double> want;
    for (int i = 0; i < N; i++) {
        int c = i % C;
        want.push_back(G[i] * Wt[c] * ((P[c] - 1) * softplus(-X[i]) - X[i]));
    }
    compare("BCEWithLogitsTargetBackward weight + posWeight, none", read(o), want, 1e-5);
    /* mean, no weights, a 0-d gradOutput: -g x / n */
    Dev g0 = make({}, ACL_FLOAT, {0.5});
    RUN(S, aclnnBinaryCrossEntropyWithLogitsTargetBackward, g0.t, x.t, t.t, nullptr, nullptr, 1, o.t);
    want.clear();
    for (int i = 0; i < N; i++) want.push_back(-0.5 * X[i] / N);
    compare("BCEWithLogitsTargetBackward mean without weights", read(o), want, 1e-5);
    expect_code("BCEWithLogitsTargetBackward reduction 3",
                aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(g.t, x.t, t.t, w.t, p.t, 3, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BCEWithLogitsTargetBackward null target",
                aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(g.t, x.t, nullptr, w.t, p.t, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    Dev bad = make({R, C + 1}, ACL_FLOAT, {0});
    expect_code("BCEWithLogitsTargetBackward gradTarget of another shape",
                aclnnBinaryCrossEntropyWithLogitsTargetBackwardGetWorkspaceSize(g.t, x.t, t.t, w.t, p.t, 0, bad.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &t, &w, &p, &g, &o, &g0, &bad}) release(*d);
    printf("ok bce target\n");
}

/* ---- Modulate ---- */

static void modulate() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int B = 2, L = 3, D = 4;
    std::vector<double> X = values(B * L * D, ACL_FLOAT, 8), Sc = values(B * D, ACL_FLOAT, 9), Sh = values(B * D, ACL_FLOAT, 10);
    Dev x = make({B, L, D}, ACL_FLOAT, X, TRANSPOSED), sc = make({B, D}, ACL_FLOAT, Sc), sh = make({B, 1, D}, ACL_FLOAT, Sh);
    Dev o = make({B, L, D}, ACL_FLOAT, {0});
    RUN(S, aclnnModulate, x.t, sc.t, sh.t, o.t);
    std::vector<double> want, want_shift;
    for (int i = 0; i < B * L * D; i++) {
        int b = i / (L * D), d = i % D;
        want.push_back(X[i] * (1 + Sc[b * D + d]) + Sh[b * D + d]);
        want_shift.push_back(X[i] + Sh[b * D + d]);
    }
    compare("Modulate scale [B, D], shift [B, 1, D], transposed self", read(o), want, 1e-6);
    RUN(S, aclnnModulate, x.t, nullptr, sh.t, o.t);
    compare("Modulate without scale", read(o), want_shift, 1e-6);
    Dev bad = make({B, D + 1}, ACL_FLOAT, {0});
    expect_code("Modulate scale [B, D + 1]", aclnnModulateGetWorkspaceSize(x.t, bad.t, sh.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Modulate null self", aclnnModulateGetWorkspaceSize(nullptr, sc.t, sh.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    Dev xi = make({B, L, D}, ACL_INT32, {0});
    expect_code("Modulate int32 self", aclnnModulateGetWorkspaceSize(xi.t, nullptr, nullptr, xi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* backward: grad_input = g·scale, grad_scale = Σ_L g·x, grad_shift = Σ_L g */
    std::vector<double> G = values(B * L * D, ACL_FLOAT, 11);
    Dev g = make({B, L, D}, ACL_FLOAT, G, STRIDED), sh2 = make({B, D}, ACL_FLOAT, Sh);
    Dev gi = make({B, L, D}, ACL_FLOAT, {0}), gsc = make({B, D}, ACL_FLOAT, {0}), gsh = make({B, D}, ACL_FLOAT, {0});
    RUN(S, aclnnModulateBackward, g.t, x.t, sc.t, sh2.t, gi.t, gsc.t, gsh.t);
    std::vector<double> wgi, wsc(B * D, 0.0), wsh(B * D, 0.0);
    for (int i = 0; i < B * L * D; i++) {
        int b = i / (L * D), d = i % D;
        wgi.push_back(G[i] * Sc[b * D + d]);
        wsc[b * D + d] += G[i] * X[i];
        wsh[b * D + d] += G[i];
    }
    compare("ModulateBackward grad_input", read(gi), wgi, 1e-6);
    compare("ModulateBackward grad_scale", read(gsc), wsc, 1e-5);
    compare("ModulateBackward grad_shift", read(gsh), wsh, 1e-5);
    RUN(S, aclnnModulateBackward, g.t, x.t, nullptr, nullptr, gi.t, nullptr, nullptr);
    compare("ModulateBackward without scale: grad_input = grad_output", read(gi), G, 0);
    expect_code("ModulateBackward scale [B, 1, D]",
                aclnnModulateBackwardGetWorkspaceSize(g.t, x.t, sh.t, sh2.t, gi.t, gsc.t, gsh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ModulateBackward null input",
                aclnnModulateBackwardGetWorkspaceSize(g.t, nullptr, sc.t, sh2.t, gi.t, gsc.t, gsh.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&x, &sc, &sh, &o, &bad, &xi, &g, &sh2, &gi, &gsc, &gsh}) release(*d);
    printf("ok modulate\n");
}

/* ---- AdaLayerNorm ---- */

struct AdaRef {
    std::vector<double> out, mean, rstd;
};

static AdaRef ada_ref(const std::vector<double> &X, const std::vector<double> &Sc, const std::vector<double> &Sh,
                      const std::vector<double> &Wt, const std::vector<double> &Bs, int rows, int S_, int H, double eps) {
    AdaRef r;
    for (int row = 0; row < rows; row++) {
        double mu = 0, var = 0;
        for (int i = 0; i < H; i++) mu += X[row * H + i];
        mu /= H;
        for (int i = 0; i < H; i++) var += (X[row * H + i] - mu) * (X[row * H + i] - mu);
        var /= H;
        double rs = 1 / std::sqrt(var + eps);
        r.mean.push_back(mu);
        r.rstd.push_back(rs);
        int b = row / S_;
        for (int i = 0; i < H; i++) {
            double ln = (X[row * H + i] - mu) * rs * Wt[i] + Bs[i];
            r.out.push_back(ln * (1 + Sc[b * H + i]) + Sh[b * H + i]);
        }
    }
    return r;
}

static void ada_layer_norm() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int B = 2, S_ = 3, H = 8, ROWS = B * S_;
    const double eps = 1e-5;
    std::vector<double> X = values(ROWS * H, ACL_FLOAT, 12), Sc = values(B * H, ACL_FLOAT, 13), Sh = values(B * H, ACL_FLOAT, 14),
                        Wt = values(H, ACL_FLOAT, 15), Bs = values(H, ACL_FLOAT, 16);
    Dev x = make({B, S_, H}, ACL_FLOAT, X, STRIDED), sc = make({B, H}, ACL_FLOAT, Sc), sh = make({B, 1, H}, ACL_FLOAT, Sh);
    Dev w = make({H}, ACL_FLOAT, Wt), b = make({H}, ACL_FLOAT, Bs), o = make({B, S_, H}, ACL_FLOAT, {0});
    AdaRef ref = ada_ref(X, Sc, Sh, Wt, Bs, ROWS, S_, H, eps);
    RUN(S, aclnnAdaLayerNorm, x.t, sc.t, sh.t, w.t, b.t, eps, o.t);
    compare("AdaLayerNorm strided x, scale [B, H], shift [B, 1, H]", read(o), ref.out, 1e-5);
    std::vector<double> ones(H, 1.0), zeros(H, 0.0);
    AdaRef plain = ada_ref(X, Sc, Sh, ones, zeros, ROWS, S_, H, eps);
    RUN(S, aclnnAdaLayerNorm, x.t, sc.t, sh.t, nullptr, nullptr, eps, o.t);
    compare("AdaLayerNorm without weight and bias", read(o), plain.out, 1e-5);
    Dev m = make({B, S_, 1}, ACL_FLOAT, {0}), rs = make({B, S_, 1}, ACL_FLOAT, {0});
    RUN(S, aclnnAdaLayerNormV2, x.t, sc.t, sh.t, w.t, b.t, eps, o.t, m.t, rs.t);
    compare("AdaLayerNormV2 out", read(o), ref.out, 1e-5);
    compare("AdaLayerNormV2 mean", read(m), ref.mean, 1e-6);
    compare("AdaLayerNormV2 rstd", read(rs), ref.rstd, 1e-6);
    /* V2 lets a float16 x take float32 weight and bias; V1 does not */
    Dev x16 = make({B, S_, H}, ACL_FLOAT16, X), sc16 = make({B, H}, ACL_FLOAT16, Sc), sh16 = make({B, H}, ACL_FLOAT16, Sh);
    Dev o16 = make({B, S_, H}, ACL_FLOAT16, {0});
    RUN(S, aclnnAdaLayerNormV2, x16.t, sc16.t, sh16.t, w.t, b.t, eps, o16.t, nullptr, nullptr);
    AdaRef r16 = ada_ref(as(X, ACL_FLOAT16), as(Sc, ACL_FLOAT16), as(Sh, ACL_FLOAT16), Wt, Bs, ROWS, S_, H, eps);
    compare("AdaLayerNormV2 f16 x with f32 weight", read(o16), as(r16.out, ACL_FLOAT16), 2e-3);
    expect_code("AdaLayerNorm f16 x with f32 weight",
                aclnnAdaLayerNormGetWorkspaceSize(x16.t, sc16.t, sh16.t, w.t, b.t, eps, o16.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaLayerNorm null shift",
                aclnnAdaLayerNormGetWorkspaceSize(x.t, sc.t, nullptr, w.t, b.t, eps, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    Dev bad = make({B + 1, H}, ACL_FLOAT, {0});
    expect_code("AdaLayerNorm scale of another batch",
                aclnnAdaLayerNormGetWorkspaceSize(x.t, bad.t, sh.t, w.t, b.t, eps, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaLayerNormV2 mean [B, S, H]",
                aclnnAdaLayerNormV2GetWorkspaceSize(x.t, sc.t, sh.t, w.t, b.t, eps, o.t, o.t, rs.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);

    /* backward from the forward's mean and rstd */
    std::vector<double> G = values(ROWS * H, ACL_FLOAT, 17);
    Dev g = make({B, S_, H}, ACL_FLOAT, G, TRANSPOSED);
    Dev gx = make({B, S_, H}, ACL_FLOAT, {0}), gsc = make({B, H}, ACL_FLOAT, {0}), gsh = make({B, 1, H}, ACL_FLOAT, {0});
    Dev gw = make({H}, ACL_FLOAT, {0}), gb = make({H}, ACL_FLOAT, {0});
    aclIntArray *ns = ia({H});
    RUN(S, aclnnAdaLayerNormBackward, g.t, x.t, ns, rs.t, m.t, sc.t, sh.t, w.t, b.t, gx.t, gsc.t, gsh.t, gw.t, gb.t);
    std::vector<double> M = read(m), RS = read(rs);
    std::vector<double> wgx, wsc(B * H, 0.0), wsh(B * H, 0.0), wgw(H, 0.0), wgb(H, 0.0);
    for (int row = 0; row < ROWS; row++) {
        int bi = row / S_;
        std::vector<double> z(H), dyg(H);
        double s1 = 0, s2 = 0;
        for (int i = 0; i < H; i++) {
            int j = row * H + i;
            z[i] = (X[j] - M[row]) * RS[row];
            double gy = G[j] * (1 + Sc[bi * H + i]);
            dyg[i] = gy * Wt[i];
            s1 += dyg[i] / H;
            s2 += dyg[i] * z[i] / H;
            wsc[bi * H + i] += G[j] * (z[i] * Wt[i] + Bs[i]);
            wsh[bi * H + i] += G[j];
            wgw[i] += gy * z[i];
            wgb[i] += gy;
        }
        for (int i = 0; i < H; i++) wgx.push_back((dyg[i] - s1 - z[i] * s2) * RS[row]);
    }
    compare("AdaLayerNormBackward gradInputOut (transposed gradOut)", read(gx), wgx, 1e-5);
    compare("AdaLayerNormBackward gradScaleOut", read(gsc), wsc, 1e-5);
    compare("AdaLayerNormBackward gradShiftOut", read(gsh), wsh, 1e-5);
    compare("AdaLayerNormBackward gradWeightOut", read(gw), wgw, 1e-5);
    compare("AdaLayerNormBackward gradBiasOut", read(gb), wgb, 1e-5);
    Dev gx2 = make({B, S_, H}, ACL_FLOAT, {0});
    RUN(S, aclnnAdaLayerNormBackward, g.t, x.t, ns, rs.t, m.t, sc.t, sh.t, w.t, b.t, gx2.t, nullptr, nullptr, nullptr, nullptr);
    compare("AdaLayerNormBackward gradInputOut alone", read(gx2), wgx, 1e-5);
    aclIntArray *ns2 = ia({H, 1});
    expect_code("AdaLayerNormBackward normalizedShape of 2",
                aclnnAdaLayerNormBackwardGetWorkspaceSize(g.t, x.t, ns2, rs.t, m.t, sc.t, sh.t, w.t, b.t, gx.t, gsc.t, gsh.t,
                                                          gw.t, gb.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AdaLayerNormBackward null mean",
                aclnnAdaLayerNormBackwardGetWorkspaceSize(g.t, x.t, ns, rs.t, nullptr, sc.t, sh.t, w.t, b.t, gx.t, gsc.t,
                                                          gsh.t, gw.t, gb.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AdaLayerNormBackward f16 mean",
                aclnnAdaLayerNormBackwardGetWorkspaceSize(g.t, x.t, ns, rs.t, sc16.t, sc.t, sh.t, w.t, b.t, gx.t, gsc.t,
                                                          gsh.t, gw.t, gb.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(ns);
    aclDestroyIntArray(ns2);
    for (Dev *d : {&x, &sc, &sh, &w, &b, &o, &m, &rs, &x16, &sc16, &sh16, &o16, &bad, &g, &gx, &gsc, &gsh, &gw, &gb, &gx2})
        release(*d);
    printf("ok ada layer norm\n");
}

/* ---- ClippedSwiglu ---- */

static void clipped_swiglu() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* x [2, 4, 3] at dim 1: rows of 12, halves of 6 */
    const int PRE = 2, CUT = 12, HALF = 6;
    const double alpha = 1.702, limit = 1.5, bias = 1.0;
    std::vector<double> X = values(PRE * CUT, ACL_FLOAT, 18), G = values(PRE * HALF, ACL_FLOAT, 19);
    Dev x = make({2, 4, 3}, ACL_FLOAT, X, STRIDED);
    Dev grp = make({1}, ACL_INT64, {1});
    for (bool inter : {false, true}) {
        for (bool group : {false, true}) {
            Dev o = make({2, 2, 3}, ACL_FLOAT, {7.0});
            Dev gy = make({2, 2, 3}, ACL_FLOAT, G), gx = make({2, 4, 3}, ACL_FLOAT, {7.0});
            RUN(S, aclnnClippedSwiglu, x.t, group ? grp.t : nullptr, 1, alpha, limit, bias, inter, o.t);
            RUN(S, aclnnClippedSwigluGrad, gy.t, x.t, group ? grp.t : nullptr, -2, alpha, limit, bias, inter, gx.t);
            std::vector<double> wy, wg(PRE * CUT, 0.0);
            int rows = group ? 1 : PRE;
            for (int r = 0; r < PRE; r++)
                for (int k = 0; k < HALF; k++) {
                    int ia_ = r * CUT + (inter ? 2 * k : k), ib = r * CUT + (inter ? 2 * k + 1 : HALF + k);
                    double a = std::min(X[ia_], limit), b = std::max(-limit, std::min(X[ib], limit));
                    double s = sigm(alpha * a);
                    if (r >= rows) {
                        wy.push_back(7.0);
                        continue;
                    }
                    wy.push_back(a * s * (b + bias));
                    double g = G[r * HALF + k];
                    wg[ia_] = X[ia_] <= limit ? g * (b + bias) * s * (1 + alpha * a * (1 - s)) : 0;
                    wg[ib] = (X[ib] >= -limit && X[ib] <= limit) ? g * a * s : 0;
                }
            char what[96];
            snprintf(what, sizeof what, "ClippedSwiglu%s%s", inter ? " interleaved" : "", group ? " groupIndex [1]" : "");
            compare(what, read(o), wy, 1e-6);
            snprintf(what, sizeof what, "ClippedSwigluGrad%s%s", inter ? " interleaved" : "", group ? " groupIndex [1]" : "");
            compare(what, read(gx), wg, 1e-6);
            release(o);
            release(gy);
            release(gx);
        }
    }
    Dev x3 = make({2, 3, 3}, ACL_FLOAT, {0}), o3 = make({2, 3, 3}, ACL_FLOAT, {0});
    expect_code("ClippedSwiglu odd along dim", aclnnClippedSwigluGetWorkspaceSize(x3.t, nullptr, 1, alpha, limit, bias, false, o3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev o = make({2, 2, 3}, ACL_FLOAT, {0});
    expect_code("ClippedSwiglu dim 3 of a 3-D x", aclnnClippedSwigluGetWorkspaceSize(x.t, nullptr, 3, alpha, limit, bias, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ClippedSwiglu null x", aclnnClippedSwigluGetWorkspaceSize(nullptr, nullptr, 1, alpha, limit, bias, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    Dev gx = make({2, 4, 3}, ACL_FLOAT, {0});
    expect_code("ClippedSwigluGrad gradY of x's shape",
                aclnnClippedSwigluGradGetWorkspaceSize(gx.t, x.t, nullptr, 1, alpha, limit, bias, false, gx.t, &ws, &ex), TILING_ERROR);
    Dev gi = make({2, 4, 3}, ACL_INT32, {0});
    expect_code("ClippedSwigluGrad int32 gradXOut",
                aclnnClippedSwigluGradGetWorkspaceSize(o.t, x.t, nullptr, 1, alpha, limit, bias, false, gi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &grp, &x3, &o3, &o, &gx, &gi}) release(*d);
    printf("ok clipped swiglu\n");
}

/* ---- PdistForward ---- */

static void pdist() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int N = 5, M = 3;
    std::vector<double> X = values(N * M, ACL_FLOAT, 20);
    Dev x = make({N, M}, ACL_FLOAT, X, TRANSPOSED), o = make({N * (N - 1) / 2}, ACL_FLOAT, {0});
    for (float p : {2.0f, 1.5f, 0.0f}) {
        aclScalar *ps = fs(p);
        RUN(S, aclnnPdistForward, x.t, ps, o.t);
        std::vector<double> want;
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++) {
                double s = 0;
                for (int k = 0; k < M; k++) {
                    double d = std::fabs(X[i * M + k] - X[j * M + k]);
                    s += p == 0 ? (d != 0) : std::pow(d, p);
                }
                want.push_back(p == 0 ? s : std::pow(s, 1.0 / p));
            }
        char what[64];
        snprintf(what, sizeof what, "PdistForward p=%g (transposed self)", p);
        compare(what, read(o), want, 1e-5);
        aclDestroyScalar(ps);
    }
    aclScalar *neg = fs(-1.0f);
    expect_code("PdistForward p = -1", aclnnPdistForwardGetWorkspaceSize(x.t, neg, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("PdistForward null pScalar", aclnnPdistForwardGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    aclScalar *two = fs(2.0f);
    Dev o2 = make({N}, ACL_FLOAT, {0});
    expect_code("PdistForward out of the wrong length", aclnnPdistForwardGetWorkspaceSize(x.t, two, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyScalar(neg);
    aclDestroyScalar(two);
    for (Dev *d : {&x, &o, &o2}) release(*d);
    printf("ok pdist\n");
}

/* ---- MultiScaleDeformableAttn ---- */

static void msda() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int B = 1, NH = 2, C = 8, Q = 32, L = 2, P = 2;
    const int HS[L] = {2, 1}, WS[L] = {3, 2}, ST[L] = {0, 6}, K = 8;
    std::vector<double> V = values(B * K * NH * C, ACL_FLOAT, 21), A = values(B * Q * NH * L * P, ACL_FLOAT, 22);
    std::vector<double> LOC(B * Q * NH * L * P * 2), G = values(B * Q * NH * C, ACL_FLOAT, 23);
    for (size_t i = 0; i < LOC.size(); i++) LOC[i] = as_type(-0.2 + 1.4 * ((i * 37) % 101) / 100.0, ACL_FLOAT);
    Dev v = make({B, K, NH, C}, ACL_FLOAT, V, STRIDED), sp = make({L, 2}, ACL_INT64, {2, 3, 1, 2});
    Dev st = make({L}, ACL_INT32, {0, 6}), loc = make({B, Q, NH, L, P, 2}, ACL_FLOAT, LOC);
    Dev a = make({B, Q, NH, L, P}, ACL_FLOAT, A), o = make({B, Q, NH * C}, ACL_FLOAT, {0});
    RUN(S, aclnnMultiScaleDeformableAttnFunction, v.t, sp.t, st.t, loc.t, a.t, o.t);
    Dev g = make({B, Q, NH * C}, ACL_FLOAT, G);
    Dev gv = make({B, K, NH, C}, ACL_FLOAT, {0}), gl = make({B, Q, NH, L, P, 2}, ACL_FLOAT, {0}), ga = make({B, Q, NH, L, P}, ACL_FLOAT, {0});
    RUN(S, aclnnMultiScaleDeformableAttentionGrad, v.t, sp.t, st.t, loc.t, a.t, g.t, gv.t, gl.t, ga.t);
    std::vector<double> wo(B * Q * NH * C, 0.0), wgv(V.size(), 0.0), wgl(LOC.size(), 0.0), wga(A.size(), 0.0);
    for (int b = 0; b < B; b++)
        for (int q = 0; q < Q; q++)
            for (int h = 0; h < NH; h++)
                for (int l = 0; l < L; l++)
                    for (int p = 0; p < P; p++) {
                        int ai = (((b * Q + q) * NH + h) * L + l) * P + p;
                        double x = LOC[ai * 2] * WS[l] - 0.5, y = LOC[ai * 2 + 1] * HS[l] - 0.5;
                        double x0 = std::floor(x), y0 = std::floor(y), ax = x - x0, ay = y - y0;
                        const double cw[4] = {(1 - ay) * (1 - ax), (1 - ay) * ax, ay * (1 - ax), ay * ax};
                        const double dx[4] = {-(1 - ay), 1 - ay, -ay, ay}, dy[4] = {-(1 - ax), -ax, 1 - ax, ax};
                        for (int c4 = 0; c4 < 4; c4++) {
                            int yy = static_cast<int>(y0) + c4 / 2, xx = static_cast<int>(x0) + c4 % 2;
                            if (yy < 0 || yy >= HS[l] || xx < 0 || xx >= WS[l]) continue;
                            int row = (b * K + ST[l] + yy * WS[l] + xx) * NH + h;
                            for (int c = 0; c < C; c++) {
                                double go = G[((b * Q + q) * NH + h) * C + c], val = V[row * C + c];
                                wo[((b * Q + q) * NH + h) * C + c] += A[ai] * cw[c4] * val;
                                wga[ai] += go * cw[c4] * val;
                                wgl[ai * 2] += A[ai] * dx[c4] * WS[l] * go * val;
                                wgl[ai * 2 + 1] += A[ai] * dy[c4] * HS[l] * go * val;
                                wgv[row * C + c] += A[ai] * cw[c4] * go;
                            }
                        }
                    }
    compare("MultiScaleDeformableAttnFunction (strided value, points outside the maps)", read(o), wo, 1e-5);
    compare("MultiScaleDeformableAttentionGrad gradValue", read(gv), wgv, 1e-5);
    compare("MultiScaleDeformableAttentionGrad gradLocation", read(gl), wgl, 1e-5);
    compare("MultiScaleDeformableAttentionGrad gradAttnWeight", read(ga), wga, 1e-5);
    Dev v6 = make({B, K, NH, 6}, ACL_FLOAT, {0}), o6 = make({B, Q, NH * 6}, ACL_FLOAT, {0});
    expect_code("MultiScaleDeformableAttnFunction 6 channels",
                aclnnMultiScaleDeformableAttnFunctionGetWorkspaceSize(v6.t, sp.t, st.t, loc.t, a.t, o6.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MultiScaleDeformableAttnFunction null location",
                aclnnMultiScaleDeformableAttnFunctionGetWorkspaceSize(v.t, sp.t, st.t, nullptr, a.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    Dev sf = make({L, 2}, ACL_FLOAT, {0});
    expect_code("MultiScaleDeformableAttnFunction float spatialShape",
                aclnnMultiScaleDeformableAttnFunctionGetWorkspaceSize(v.t, sf.t, st.t, loc.t, a.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev l16 = make({B, Q, NH, L, P, 2}, ACL_FLOAT16, {0});
    expect_code("MultiScaleDeformableAttentionGrad f16 location with f32 value",
                aclnnMultiScaleDeformableAttentionGradGetWorkspaceSize(v.t, sp.t, st.t, l16.t, a.t, g.t, gv.t, gl.t, ga.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&v, &sp, &st, &loc, &a, &o, &g, &gv, &gl, &ga, &v6, &o6, &sf, &l16}) release(*d);
    printf("ok msda\n");
}

/* ---- Sinkhorn ---- */

static void sinkhorn() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int R = 5, C = 3;
    std::vector<double> X(R * C);
    for (int i = 0; i < R * C; i++) X[i] = as_type(((i * 7) % 11) / 10.0, ACL_FLOAT);
    Dev c = make({R, C}, ACL_FLOAT, X, TRANSPOSED), p = make({R, C}, ACL_FLOAT, {0});
    for (float tol : {1e-6f, 0.0f}) {
        aclScalar *ts = tol > 0 ? fs(tol) : nullptr;
        double t = tol > 0 ? tol : 1e-4;
        RUN(S, aclnnSinkhorn, c.t, ts, p.t);
        std::vector<double> K(R * C), d0(R, 1.0), d1(C, 1.0);
        for (int i = 0; i < R * C; i++) K[i] = std::exp(X[i]);
        for (int it = 0; it < 100000; it++) {
            for (int i = 0; i < R; i++) {
                double s = 0;
                for (int j = 0; j < C; j++) s += d1[j] * K[i * C + j];
                d0[i] = 1 / (R * (s + 1e-8));
            }
            double err = 0;
            for (int j = 0; j < C; j++) {
                double s = 0;
                for (int i = 0; i < R; i++) s += d0[i] * K[i * C + j];
                double nw = 1 / (C * (s + 1e-8));
                err += std::fabs(d1[j] - nw);
                d1[j] = nw;
            }
            if (err / C <= t) break;
        }
        std::vector<double> want;
        for (int i = 0; i < R * C; i++) want.push_back(d1[i % C] * K[i] * d0[i / C]);
        compare(tol > 0 ? "Sinkhorn tol 1e-6 (transposed cost)" : "Sinkhorn default tol", read(p), want, 1e-5);
        if (ts) aclDestroyScalar(ts);
    }
    Dev c3 = make({1, R, C}, ACL_FLOAT, {0}), p3 = make({1, R, C}, ACL_FLOAT, {0});
    expect_code("Sinkhorn 3-D cost", aclnnSinkhornGetWorkspaceSize(c3.t, nullptr, p3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Sinkhorn null cost", aclnnSinkhornGetWorkspaceSize(nullptr, nullptr, p.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    Dev pi = make({R, C}, ACL_INT32, {0});
    expect_code("Sinkhorn int32 p", aclnnSinkhornGetWorkspaceSize(c.t, nullptr, pi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&c, &p, &c3, &p3, &pi}) release(*d);
    printf("ok sinkhorn\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    qkv();
    upsample();
    bce_target();
    modulate();
    ada_layer_norm();
    clipped_swiglu();
    pdist();
    msda();
    sinkhorn();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
