/* The fused operators of large-model code against float64 host references written here
 * from CANN's formulas: RmsNorm (+Grad), RotaryPositionEmbedding (+Grad, modes half,
 * interleave, quarter, interleave-half), ApplyRotaryPosEmb / V2 (in place), SwiGlu (+Grad),
 * FlashAttentionScore (+Grad) in the layouts BNSD, BSND, BSH (with grouped key heads) and
 * SBH, with sparse modes 0 (full mask and a band), 1, 2, 3 and 4, a pse, dropout from
 * aclnnDropoutGenMaskV2, and softmax max/sum; PromptFlashAttentionV3 (BNSD_BSND, masks,
 * actual key lengths), IncreFlashAttentionV4 and FusedInferAttentionScoreV2/V3 (with the
 * log-sum-exp). The attention gradients are checked against
 * central finite differences of the reference forward (independent of the analytic
 * formulas the emulator uses). Each operator has argument errors with CANN's codes.
 * Tolerances: float32 1e-5 relative (float64 inside, rounded once), float16 2e-3, bfloat16
 * 1.6e-2 (the inputs are rounded to the dtype first, so only the output rounding differs). */
#include <algorithm>
#include <cmath>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_rms_norm.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "aclnnop/aclnn_rotary_position_embedding.h"
#include "aclnnop/aclnn_rotary_position_embedding_grad.h"
#include "aclnnop/aclnn_apply_rotary_pos_emb.h"
#include "aclnnop/aclnn_apply_rotary_pos_emb_v2.h"
#include "aclnnop/aclnn_swi_glu.h"
#include "aclnnop/aclnn_swi_glu_grad.h"
#include "aclnnop/aclnn_flash_attention_score.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_dropout_gen_mask_v2.h"
#include "aclnnop/aclnn_prompt_flash_attention_v3.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v2.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v3.h"

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

static double tol_of(aclDataType t) { return t == ACL_FLOAT ? 1e-5 : t == ACL_FLOAT16 ? 2e-3 : 1.6e-2; }
static const char *tname(aclDataType t) { return t == ACL_FLOAT ? "float32" : t == ACL_FLOAT16 ? "float16" : "bfloat16"; }

static std::vector<double> vals(int64_t n, aclDataType t, unsigned seed, double scale = 1.0) {
    std::vector<double> v = values(n, ACL_FLOAT, seed);
    for (auto &e : v) e = as_type(e * scale / 3.0, t);
    return v;
}

/* ---------------------------------------------------------------- RMS norm */

static void rms_norm() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        const int R = 6, N = 16;
        std::vector<double> X = vals(R * N, t, 1), G = vals(N, t, 2);
        Dev x = make({2, 3, N}, t, X, t == ACL_FLOAT ? STRIDED : CONTIG), g = make({N}, t, G);
        Dev y = make({2, 3, N}, t, {0}), r = make({2, 3, 1}, ACL_FLOAT, {0});
        RUN(S, aclnnRmsNorm, x.t, g.t, 1e-6, y.t, r.t);
        std::vector<double> wy(R * N), wr(R);
        for (int i = 0; i < R; i++) {
            double ss = 0;
            for (int j = 0; j < N; j++) ss += X[i * N + j] * X[i * N + j];
            wr[i] = 1 / std::sqrt(ss / N + 1e-6);
            for (int j = 0; j < N; j++) wy[i * N + j] = X[i * N + j] * wr[i] * G[j];
        }
        char what[96];
        snprintf(what, sizeof what, "RmsNorm %s y", tname(t));
        compare(what, read(y), wy, tol_of(t));
        snprintf(what, sizeof what, "RmsNorm %s rstd", tname(t));
        compare(what, read(r), wr, 1e-5);
        /* backward */
        std::vector<double> DY = vals(R * N, t, 3);
        Dev dy = make({2, 3, N}, t, DY), dx = make({2, 3, N}, t, {0}), dg = make({N}, ACL_FLOAT, {0});
        RUN(S, aclnnRmsNormGrad, dy.t, x.t, r.t, g.t, dx.t, dg.t);
        std::vector<double> rr = read(r), wdx(R * N), wdg(N, 0.0);
        for (int i = 0; i < R; i++) {
            double m = 0;
            for (int j = 0; j < N; j++) m += DY[i * N + j] * G[j] * X[i * N + j] * rr[i];
            m /= N;
            for (int j = 0; j < N; j++) {
                wdx[i * N + j] = (DY[i * N + j] * G[j] - X[i * N + j] * rr[i] * m) * rr[i];
                wdg[j] += DY[i * N + j] * X[i * N + j] * rr[i];
            }
        }
        snprintf(what, sizeof what, "RmsNormGrad %s dx", tname(t));
        compare(what, read(dx), wdx, tol_of(t) * 4);
        snprintf(what, sizeof what, "RmsNormGrad %s dgamma", tname(t));
        compare(what, read(dg), wdg, 1e-5);
        for (Dev *d : {&x, &g, &y, &r, &dy, &dx, &dg}) release(*d);
    }
    /* gamma over the last two dimensions: rstd [2, 1, 1] */
    std::vector<double> X = vals(24, ACL_FLOAT, 4), G = vals(12, ACL_FLOAT, 5);
    Dev x = make({2, 3, 4}, ACL_FLOAT, X), g = make({3, 4}, ACL_FLOAT, G);
    Dev y = make({2, 3, 4}, ACL_FLOAT, {0}), r = make({2, 1, 1}, ACL_FLOAT, {0});
    RUN(S, aclnnRmsNorm, x.t, g.t, 1e-5, y.t, r.t);
    std::vector<double> wy(24);
    for (int i = 0; i < 2; i++) {
        double ss = 0;
        for (int j = 0; j < 12; j++) ss += X[i * 12 + j] * X[i * 12 + j];
        double inv = 1 / std::sqrt(ss / 12 + 1e-5);
        for (int j = 0; j < 12; j++) wy[i * 12 + j] = X[i * 12 + j] * inv * G[j];
    }
    compare("RmsNorm gamma [3, 4] of x [2, 3, 4]", read(y), wy, 1e-5);
    Dev gbad = make({3}, ACL_FLOAT, {1}), rint = make({2, 1, 1}, ACL_INT32, {0}), rbad = make({2, 3, 1}, ACL_FLOAT, {0});
    expect_code("RmsNorm gamma not a suffix of x", aclnnRmsNormGetWorkspaceSize(x.t, gbad.t, 1e-6, y.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("RmsNorm int32 rstd", aclnnRmsNormGetWorkspaceSize(x.t, g.t, 1e-6, y.t, rint.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("RmsNorm rstd of the wrong shape", aclnnRmsNormGetWorkspaceSize(x.t, g.t, 1e-6, y.t, rbad.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("RmsNorm null x", aclnnRmsNormGetWorkspaceSize(nullptr, g.t, 1e-6, y.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("RmsNormGrad null dgammaOut",
                aclnnRmsNormGradGetWorkspaceSize(x.t, x.t, r.t, g.t, y.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&x, &g, &y, &r, &gbad, &rint, &rbad}) release(*d);
    printf("ok rms_norm\n");
}

/* ---------------------------------------------------------------- rotary embedding */

/* a(x), b(x) of one row: y = a·cos + b·sin (CANN's four modes). */
static void rope_row(int mode, const double *x, int D, double *a, double *b) {
    int h = D / 2, q = D / 4;
    for (int i = 0; i < D; i++) {
        switch (mode) {
        case 0: a[i] = x[i]; b[i] = i < h ? -x[i + h] : x[i - h]; break;
        case 1: a[i] = x[i]; b[i] = i % 2 == 0 ? -x[i + 1] : x[i - 1]; break;
        case 2: {
            int blk = i / q, k = i % q;
            a[i] = x[i];
            b[i] = blk == 0 ? -x[q + k] : blk == 1 ? x[k] : blk == 2 ? -x[3 * q + k] : x[2 * q + k];
            break;
        }
        default:
            a[i] = i < h ? x[2 * i] : x[2 * (i - h) + 1];
            b[i] = i < h ? -x[2 * i + 1] : x[2 * (i - h)];
        }
    }
}

/* Row-major index of x's element `i` in a broadcast tensor of shape `cs`. */
static int64_t bidx(const Shape &xs, const Shape &cs, int64_t i) {
    int64_t o = 0, mul = 1;
    for (int k = static_cast<int>(xs.size()) - 1; k >= 0; k--) {
        int64_t c = i % xs[k];
        i /= xs[k];
        if (cs[k] != 1) o += c * mul;
        mul *= cs[k];
    }
    return o;
}

static std::vector<double> rope_ref(int mode, const Shape &xs, const std::vector<double> &X, const Shape &cs,
                                    const std::vector<double> &C, const std::vector<double> &Sn) {
    int D = static_cast<int>(xs.back());
    std::vector<double> y(X.size()), a(D), b(D);
    for (size_t r = 0; r < X.size() / D; r++) {
        rope_row(mode, &X[r * D], D, a.data(), b.data());
        for (int i = 0; i < D; i++) {
            int64_t e = static_cast<int64_t>(r) * D + i, ci = bidx(xs, cs, e);
            y[e] = a[i] * C[ci] + b[i] * Sn[ci];
        }
    }
    return y;
}

static void rope() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const Shape xs = {2, 3, 4, 8}, cs = {1, 1, 4, 8};
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16})
        for (int mode = 0; mode < 4; mode++) {
            std::vector<double> X = vals(numel(xs), t, 10 + mode), C = vals(numel(cs), t, 20), Sn = vals(numel(cs), t, 30);
            Dev x = make(xs, t, X, t == ACL_FLOAT ? TRANSPOSED : CONTIG), c = make(cs, t, C), s = make(cs, t, Sn);
            Dev y = make(xs, t, {0});
            RUN(S, aclnnRotaryPositionEmbedding, x.t, c.t, s.t, mode, y.t);
            char what[96];
            snprintf(what, sizeof what, "RotaryPositionEmbedding %s mode %d", tname(t), mode);
            compare(what, read(y), rope_ref(mode, xs, X, cs, C, Sn), tol_of(t) * 2);
            /* backward with x: dx = Jᵀdy, dcos/dsin summed over the broadcast B, N */
            std::vector<double> DY = vals(numel(xs), t, 40 + mode);
            Dev dy = make(xs, t, DY), dx = make(xs, t, {0}), dc = make(cs, t, {0}), ds = make(cs, t, {0});
            RUN(S, aclnnRotaryPositionEmbeddingGrad, dy.t, c.t, s.t, x.t, mode, dx.t, dc.t, ds.t);
            int D = 8;
            std::vector<double> wdx(X.size(), 0.0), wdc(C.size(), 0.0), wds(C.size(), 0.0), a(D), b(D);
            /* dx by linearity: dx_k = Σ dy · ∂y/∂x_k, with ∂y/∂x from rope_row of unit vectors */
            for (size_t r = 0; r < X.size() / D; r++) {
                for (int k = 0; k < D; k++) {
                    std::vector<double> e(D, 0.0);
                    e[k] = 1;
                    rope_row(mode, e.data(), D, a.data(), b.data());
                    double acc = 0;
                    for (int i = 0; i < D; i++) {
                        int64_t el = static_cast<int64_t>(r) * D + i, ci = bidx(xs, cs, el);
                        acc += DY[el] * (a[i] * C[ci] + b[i] * Sn[ci]);
                    }
                    wdx[r * D + k] = acc;
                }
                rope_row(mode, &X[r * D], D, a.data(), b.data());
                for (int i = 0; i < D; i++) {
                    int64_t el = static_cast<int64_t>(r) * D + i, ci = bidx(xs, cs, el);
                    wdc[ci] += DY[el] * a[i];
                    wds[ci] += DY[el] * b[i];
                }
            }
            snprintf(what, sizeof what, "RotaryPositionEmbeddingGrad %s mode %d dx", tname(t), mode);
            compare(what, read(dx), wdx, tol_of(t) * 2);
            snprintf(what, sizeof what, "RotaryPositionEmbeddingGrad %s mode %d dcos", tname(t), mode);
            compare(what, read(dc), wdc, tol_of(t) * 4);
            snprintf(what, sizeof what, "RotaryPositionEmbeddingGrad %s mode %d dsin", tname(t), mode);
            compare(what, read(ds), wds, tol_of(t) * 4);
            for (Dev *d : {&x, &c, &s, &y, &dy, &dx, &dc, &ds}) release(*d);
        }
    /* BSND with cos [1, S, 1, D] */
    {
        Shape bs = {2, 4, 3, 8}, bc = {1, 4, 1, 8};
        std::vector<double> X = vals(numel(bs), ACL_FLOAT, 50), C = vals(numel(bc), ACL_FLOAT, 51),
                            Sn = vals(numel(bc), ACL_FLOAT, 52);
        Dev x = make(bs, ACL_FLOAT, X), c = make(bc, ACL_FLOAT, C), s = make(bc, ACL_FLOAT, Sn), y = make(bs, ACL_FLOAT, {0});
        RUN(S, aclnnRotaryPositionEmbedding, x.t, c.t, s.t, 0, y.t);
        compare("RotaryPositionEmbedding BSND cos 1S1D", read(y), rope_ref(0, bs, X, bc, C, Sn), 1e-5);
        /* ApplyRotaryPosEmb (V1, half) in place on query [2, 4, 3, 8] and key [2, 4, 1, 8] */
        Shape ks = {2, 4, 1, 8};
        std::vector<double> K = vals(numel(ks), ACL_FLOAT, 53);
        Dev q = make(bs, ACL_FLOAT, X), k = make(ks, ACL_FLOAT, K);
        RUN(S, aclnnApplyRotaryPosEmb, q.t, k.t, c.t, s.t, 1);
        compare("ApplyRotaryPosEmb query in place", read(q), rope_ref(0, bs, X, bc, C, Sn), 1e-5);
        compare("ApplyRotaryPosEmb key in place", read(k), rope_ref(0, ks, K, bc, C, Sn), 1e-5);
        Dev q2 = make(bs, ACL_FLOAT, X), k2 = make(ks, ACL_FLOAT, K);
        char mode_s[] = "interleave";
        RUN(S, aclnnApplyRotaryPosEmbV2, q2.t, k2.t, c.t, s.t, 1, mode_s);
        compare("ApplyRotaryPosEmbV2 interleave query", read(q2), rope_ref(1, bs, X, bc, C, Sn), 1e-5);
        compare("ApplyRotaryPosEmbV2 interleave key", read(k2), rope_ref(1, ks, K, bc, C, Sn), 1e-5);
        char bad_s[] = "diagonal";
        expect_code("ApplyRotaryPosEmbV2 unknown rotaryMode",
                    aclnnApplyRotaryPosEmbV2GetWorkspaceSize(q2.t, k2.t, c.t, s.t, 1, bad_s, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ApplyRotaryPosEmb layout 9", aclnnApplyRotaryPosEmbGetWorkspaceSize(q.t, k.t, c.t, s.t, 9, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        /* errors: mode 7 and a cos that does not broadcast give ACLNN_ERR_INNER_TILING_ERROR */
        expect_code("RotaryPositionEmbedding mode 7",
                    aclnnRotaryPositionEmbeddingGetWorkspaceSize(x.t, c.t, s.t, 7, y.t, &ws, &ex), 561002);
        Dev cbad = make({1, 5, 1, 8}, ACL_FLOAT, {1});
        expect_code("RotaryPositionEmbedding cos [1, 5, 1, 8] for x [2, 4, 3, 8]",
                    aclnnRotaryPositionEmbeddingGetWorkspaceSize(x.t, cbad.t, cbad.t, 0, y.t, &ws, &ex), 561002);
        Dev c16 = make(bc, ACL_FLOAT16, {1});
        expect_code("RotaryPositionEmbedding float16 cos for float32 x",
                    aclnnRotaryPositionEmbeddingGetWorkspaceSize(x.t, c16.t, c16.t, 0, y.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("RotaryPositionEmbedding null sin",
                    aclnnRotaryPositionEmbeddingGetWorkspaceSize(x.t, c.t, nullptr, 0, y.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        for (Dev *d : {&x, &c, &s, &y, &q, &k, &q2, &k2, &cbad, &c16}) release(*d);
    }
    printf("ok rope\n");
}

/* ---------------------------------------------------------------- SwiGLU */

static double sigm(double v) { return 1 / (1 + std::exp(-v)); }

static void swiglu() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16})
        for (int dim : {-1, 0, 1}) {
            Shape xs = {4, 6, 2};
            int d = dim < 0 ? dim + 3 : dim;
            Shape hs = xs;
            hs[d] /= 2;
            int64_t outer = 1, inner = 1;
            for (int i = 0; i < d; i++) outer *= xs[i];
            for (int i = d + 1; i < 3; i++) inner *= xs[i];
            int64_t h = hs[d];
            std::vector<double> X = vals(numel(xs), t, 60 + d, 4.0), G = vals(numel(hs), t, 70 + d);
            Dev x = make(xs, t, X), y = make(hs, t, {0});
            RUN(S, aclnnSwiGlu, x.t, dim, y.t);
            std::vector<double> wy(numel(hs)), wdx(numel(xs));
            for (int64_t o = 0; o < outer; o++)
                for (int64_t i = 0; i < h * inner; i++) {
                    double A = X[o * 2 * h * inner + i], B = X[o * 2 * h * inner + h * inner + i], g = G[o * h * inner + i];
                    wy[o * h * inner + i] = A * sigm(A) * B;
                    wdx[o * 2 * h * inner + i] = g * (sigm(A) + sigm(A) * (1 - sigm(A)) * A) * B;
                    wdx[o * 2 * h * inner + h * inner + i] = g * sigm(A) * A;
                }
            char what[96];
            snprintf(what, sizeof what, "SwiGlu %s dim %d", tname(t), dim);
            compare(what, read(y), wy, tol_of(t));
            Dev g = make(hs, t, G), dx = make(xs, t, {0});
            RUN(S, aclnnSwiGluGrad, g.t, x.t, dim, dx.t);
            snprintf(what, sizeof what, "SwiGluGrad %s dim %d", tname(t), dim);
            compare(what, read(dx), wdx, tol_of(t) * 2);
            for (Dev *e : {&x, &y, &g, &dx}) release(*e);
        }
    Dev x = make({3, 5}, ACL_FLOAT, {1}), y = make({3, 2}, ACL_FLOAT, {0}), y2 = make({3, 3}, ACL_FLOAT, {0});
    expect_code("SwiGlu odd split dimension", aclnnSwiGluGetWorkspaceSize(x.t, -1, y.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SwiGlu dim 2 of a 2-D x", aclnnSwiGluGetWorkspaceSize(x.t, 2, y2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SwiGlu null out", aclnnSwiGluGetWorkspaceSize(x.t, -1, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *e : {&x, &y, &y2}) release(*e);
    printf("ok swiglu\n");
}

/* ---------------------------------------------------------------- flash attention */

enum Lay { BSH, SBH, BSND, BNSD };
static const char *lay_s[] = {"BSH", "SBH", "BSND", "BNSD"};

static Shape lshape(Lay l, int64_t B, int64_t S, int64_t N, int64_t D) {
    switch (l) {
    case BSH: return {B, S, N * D};
    case SBH: return {S, B, N * D};
    case BSND: return {B, S, N, D};
    default: return {B, N, S, D};
    }
}

static int64_t loff(Lay l, int64_t B, int64_t S, int64_t N, int64_t D, int64_t b, int64_t n, int64_t s, int64_t d) {
    switch (l) {
    case BSH: case BSND: return ((b * S + s) * N + n) * D + d;
    case SBH: return ((s * B + b) * N + n) * D + d;
    default: return ((b * N + n) * S + s) * D + d;
    }
}

struct FaCase {
    Lay l;
    int64_t B, N1, N2, S1, S2, D;
    int sparse = 0;
    int64_t pre = 2147483647, next = 2147483647;
    bool mask = false, pse = false;
    double keep = 1.0;
};

/* Reference forward: out (layout), max and sum per (b, n, i). `M` is the full [S1, S2]
 * mask (1 = masked) for modes 0/1, `P` the pse [B, N1, S1, S2], `K` the keep bits. */
static void fa_ref(const FaCase &c, double scale, const std::vector<double> &Q, const std::vector<double> &Kt,
                   const std::vector<double> &V, const std::vector<double> &M, const std::vector<double> &P,
                   const std::vector<int> &keep, std::vector<double> &O, std::vector<double> &mx, std::vector<double> &sm) {
    O.assign(static_cast<size_t>(c.B * c.S1 * c.N1 * c.D), 0.0);
    mx.assign(static_cast<size_t>(c.B * c.N1 * c.S1), 0.0);
    sm = mx;
    int64_t g = c.N1 / c.N2, shift = c.S2 - c.S1;
    for (int64_t b = 0; b < c.B; b++)
        for (int64_t n = 0; n < c.N1; n++)
            for (int64_t i = 0; i < c.S1; i++) {
                std::vector<double> s(c.S2);
                std::vector<bool> off(c.S2);
                double m = -INFINITY;
                for (int64_t j = 0; j < c.S2; j++) {
                    bool masked = false;
                    switch (c.sparse) {
                    case 0: masked = c.mask && (M[i * c.S2 + j] != 0 || i - j > c.pre || j - i > c.next); break;
                    case 1: masked = M[i * c.S2 + j] != 0; break;
                    case 2: masked = j > i; break;
                    case 3: masked = j > i + shift; break;
                    case 4: masked = (j - (i + shift)) > c.next || ((i + shift) - j) > c.pre; break;
                    }
                    off[j] = masked;
                    double dot = 0;
                    for (int64_t d = 0; d < c.D; d++)
                        dot += Q[loff(c.l, c.B, c.S1, c.N1, c.D, b, n, i, d)] * Kt[loff(c.l, c.B, c.S2, c.N2, c.D, b, n / g, j, d)];
                    s[j] = scale * (dot + (c.pse ? P[((b * c.N1 + n) * c.S1 + i) * c.S2 + j] : 0));
                    if (!masked) m = std::max(m, s[j]);
                }
                double sum = 0;
                for (int64_t j = 0; j < c.S2; j++)
                    if (!off[j]) sum += std::exp(s[j] - m);
                mx[(b * c.N1 + n) * c.S1 + i] = m;
                sm[(b * c.N1 + n) * c.S1 + i] = sum;
                for (int64_t j = 0; j < c.S2; j++) {
                    if (off[j]) continue;
                    double p = std::exp(s[j] - m) / sum;
                    if (c.keep < 1) p = p * keep[((b * c.N1 + n) * c.S1 + i) * c.S2 + j] / c.keep;
                    for (int64_t d = 0; d < c.D; d++)
                        O[loff(c.l, c.B, c.S1, c.N1, c.D, b, n, i, d)] += p * V[loff(c.l, c.B, c.S2, c.N2, c.D, b, n / g, j, d)];
                }
            }
}

static void fa_case(const FaCase &c, aclDataType t) {
    double scale = 1 / std::sqrt(static_cast<double>(c.D));
    Shape qs = lshape(c.l, c.B, c.S1, c.N1, c.D), ks = lshape(c.l, c.B, c.S2, c.N2, c.D);
    std::vector<double> Q = vals(numel(qs), t, 80, 3), K = vals(numel(ks), t, 81, 3), V = vals(numel(ks), t, 82, 3);
    std::vector<double> M(static_cast<size_t>(c.S1 * c.S2), 0.0), P, Mc;
    uint32_t x = 12345;
    for (auto &m : M) {
        x = x * 1103515245u + 12345u;
        m = (x >> 16) % 4 == 0 ? 1 : 0;
    }
    for (int64_t i = 0; i < c.S1; i++) M[i * c.S2] = 0; /* no fully masked row */
    Dev q = make(qs, t, Q), k = make(ks, t, K), v = make(ks, t, V);
    Dev mask, pse, drop;
    if (c.sparse >= 2) {
        Mc.resize(2048 * 2048);
        for (int64_t i = 0; i < 2048; i++)
            for (int64_t j = 0; j < 2048; j++) Mc[i * 2048 + j] = j > i ? 1 : 0;
        mask = make({2048, 2048}, ACL_BOOL, Mc);
    } else if (c.mask) {
        mask = make({c.S1, c.S2}, ACL_UINT8, M);
    }
    if (c.pse) {
        P = vals(c.B * c.N1 * c.S1 * c.S2, t, 83);
        pse = make({c.B, c.N1, c.S1, c.S2}, t, P);
    }
    std::vector<int> keep(static_cast<size_t>(c.B * c.N1 * c.S1 * c.S2), 1);
    if (c.keep < 1) {
        int64_t n = static_cast<int64_t>(keep.size()), bytes = (n + 127) / 128 * 128 / 8;
        drop = make({bytes}, ACL_UINT8, {0});
        aclIntArray *shp = aclCreateIntArray(&n, 1);
        RUN(S, aclnnDropoutGenMaskV2, shp, 1 - c.keep, 7, 0, t, drop.t);
        std::vector<double> bits = read(drop);
        for (int64_t i = 0; i < n; i++) keep[i] = (static_cast<int>(bits[i / 8]) >> (i % 8)) & 1;
        aclDestroyIntArray(shp);
    }
    Shape os = lshape(c.l, c.B, c.S1, c.N1, c.D), st = {c.B, c.N1, c.S1, 8};
    Dev out = make(os, t, {0}), smax = make(st, ACL_FLOAT, {0}), ssum = make(st, ACL_FLOAT, {0}), sout = make({0}, t, {});
    char layout[8];
    snprintf(layout, sizeof layout, "%s", lay_s[c.l]);
    RUN(S, aclnnFlashAttentionScore, q.t, k.t, v.t, pse.t, drop.t, nullptr, mask.t, nullptr, scale, c.keep, c.pre, c.next,
        c.N1, layout, 0, c.sparse, smax.t, ssum.t, sout.t, out.t);
    std::vector<double> O, mx, sm;
    fa_ref(c, scale, Q, K, V, M, P, keep, O, mx, sm);
    char what[160];
    snprintf(what, sizeof what, "FlashAttentionScore %s %s B%lld N%lld/%lld S%lld/%lld sparse %d%s%s keep %.2f", tname(t),
             lay_s[c.l], (long long)c.B, (long long)c.N1, (long long)c.N2, (long long)c.S1, (long long)c.S2, c.sparse,
             c.mask ? " mask" : "", c.pse ? " pse" : "", c.keep);
    compare(what, read(out), O, tol_of(t) * 3);
    std::vector<double> wmax, wsum;
    for (size_t i = 0; i < mx.size(); i++)
        for (int r = 0; r < 8; r++) {
            wmax.push_back(mx[i]);
            wsum.push_back(sm[i]);
        }
    std::string w2 = std::string(what) + " softmax_max";
    compare(w2.c_str(), read(smax), wmax, t == ACL_FLOAT ? 1e-5 : 1e-4);
    w2 = std::string(what) + " softmax_sum";
    compare(w2.c_str(), read(ssum), wsum, t == ACL_FLOAT ? 1e-5 : 1e-4);
    /* backward (float32 only): finite differences of L = Σ dy·out on the reference */
    if (t == ACL_FLOAT) {
        std::vector<double> DY = vals(numel(os), t, 84);
        Dev dy = make(os, t, DY), dq = make(qs, t, {0}), dk = make(ks, t, {0}), dv = make(ks, t, {0});
        Dev dpse = c.pse ? make({c.B, c.N1, c.S1, c.S2}, t, {0}) : make({0}, t, {});
        RUN(S, aclnnFlashAttentionScoreGrad, q.t, k.t, v.t, dy.t, pse.t, drop.t, nullptr, mask.t, smax.t, ssum.t, nullptr,
            out.t, nullptr, scale, c.keep, c.pre, c.next, c.N1, layout, 0, c.sparse, dq.t, dk.t, dv.t, dpse.t);
        auto loss = [&](const std::vector<double> &q_, const std::vector<double> &k_, const std::vector<double> &v_,
                        const std::vector<double> &p_) {
            std::vector<double> o, a, b2;
            fa_ref(c, scale, q_, k_, v_, M, p_, keep, o, a, b2);
            double L = 0;
            for (size_t i = 0; i < o.size(); i++) L += o[i] * DY[i];
            return L;
        };
        auto fd = [&](int which) {
            std::vector<double> qq = Q, kk = K, vv = V, pp = P;
            std::vector<double> &w = which == 0 ? qq : which == 1 ? kk : which == 2 ? vv : pp;
            std::vector<double> g(w.size());
            const double h = 1e-5;
            for (size_t i = 0; i < w.size(); i++) {
                double s0 = w[i];
                w[i] = s0 + h;
                double lp = loss(qq, kk, vv, pp);
                w[i] = s0 - h;
                double lm = loss(qq, kk, vv, pp);
                w[i] = s0;
                g[i] = (lp - lm) / (2 * h);
            }
            return g;
        };
        std::string w3 = std::string(what) + " grad dq";
        compare(w3.c_str(), read(dq), fd(0), 2e-5);
        w3 = std::string(what) + " grad dk";
        compare(w3.c_str(), read(dk), fd(1), 2e-5);
        w3 = std::string(what) + " grad dv";
        compare(w3.c_str(), read(dv), fd(2), 2e-5);
        if (c.pse) {
            w3 = std::string(what) + " grad dpse";
            compare(w3.c_str(), read(dpse), fd(3), 2e-5);
        }
        for (Dev *d : {&dy, &dq, &dk, &dv, &dpse}) release(*d);
    }
    for (Dev *d : {&q, &k, &v, &mask, &pse, &drop, &out, &smax, &ssum, &sout}) release(*d);
}

static void attention() {
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        FaCase c{BNSD, 1, 2, 2, 5, 7, 8};
        fa_case(c, t);
    }
    FaCase cases[] = {
        {BSH, 2, 4, 2, 6, 6, 4},                       /* grouped key heads */
        {SBH, 1, 2, 1, 5, 3, 8},                       /* multi-query */
        {BSND, 2, 2, 2, 4, 6, 4, 0, 2147483647, 2147483647, true},
        {BNSD, 1, 2, 2, 6, 6, 4, 0, 1, 0, true},       /* mask and band (pre 1, next 0) */
        {BSND, 1, 2, 2, 5, 5, 4, 1, 0, 0, true},       /* allMask, tokens ignored */
        {BNSD, 1, 2, 1, 5, 8, 4, 2, 2147483647, 2147483647, true}, /* left-up causal */
        {BSH, 2, 2, 2, 5, 8, 4, 3, 2147483647, 2147483647, true},  /* right-down causal */
        {BNSD, 1, 1, 1, 6, 6, 4, 4, 2, 1, true},       /* band */
        {BNSD, 1, 2, 2, 4, 5, 4, 0, 2147483647, 2147483647, false, true}, /* pse */
    };
    for (const FaCase &c : cases) fa_case(c, ACL_FLOAT);
    FaCase dc{BNSD, 1, 2, 2, 5, 6, 4};
    dc.keep = 0.7;
    fa_case(dc, ACL_FLOAT);
    /* errors */
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev q = make({1, 4, 8}, ACL_FLOAT, {1}), k = make({1, 4, 8}, ACL_FLOAT, {1}), o = make({1, 4, 8}, ACL_FLOAT, {0});
    Dev sm = make({1, 2, 4, 8}, ACL_FLOAT, {0}), ss = make({1, 2, 4, 8}, ACL_FLOAT, {0}), k16 = make({1, 4, 8}, ACL_FLOAT16, {1});
    char bsh[] = "BSH", bad[] = "BHS", tnd[] = "TND";
    expect_code("FlashAttentionScore layout BHS",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0,
                                                         65536, 65536, 2, bad, 0, 0, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FlashAttentionScore layout TND (VarLen only)",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0,
                                                         65536, 65536, 2, tnd, 0, 0, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FlashAttentionScore headNum 3 does not divide H 8",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0,
                                                         65536, 65536, 3, bsh, 0, 0, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FlashAttentionScore float16 key with float32 query",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k16.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0,
                                                         65536, 65536, 2, bsh, 0, 0, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FlashAttentionScore sparseMode 3 without a mask",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0,
                                                         65536, 65536, 2, bsh, 0, 3, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FlashAttentionScore keepProb 0.5 without dropMask",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 0.5,
                                                         65536, 65536, 2, bsh, 0, 0, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FlashAttentionScore null inputLayout",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0,
                                                         65536, 65536, 2, nullptr, 0, 0, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FlashAttentionScore null value",
                aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1.0, 1.0,
                                                         65536, 65536, 2, bsh, 0, 0, sm.t, ss.t, nullptr, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FlashAttentionScoreGrad null dqOut",
                aclnnFlashAttentionScoreGradGetWorkspaceSize(q.t, k.t, k.t, o.t, nullptr, nullptr, nullptr, nullptr, sm.t, ss.t,
                                                             nullptr, o.t, nullptr, 1.0, 1.0, 65536, 65536, 2, bsh, 0, 0,
                                                             nullptr, k.t, k.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&q, &k, &o, &sm, &ss, &k16}) release(*d);
    printf("ok attention\n");
}

/* ---------------------------------------------------------------- inference attention */

/* softmax(scale·q·kᵀ, masked excluded)·v with input layout `li` and output layout `lo`. */
static std::vector<double> infer_ref(Lay li, Lay lo, int64_t B, int64_t N1, int64_t N2, int64_t S1, int64_t S2,
                                     int64_t D, double scale, const std::vector<double> &Q, const std::vector<double> &K,
                                     const std::vector<double> &V,
                                     const std::function<bool(int64_t, int64_t, int64_t, int64_t)> &masked) {
    std::vector<double> O(static_cast<size_t>(B * N1 * S1 * D), 0.0);
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N1; n++)
            for (int64_t i = 0; i < S1; i++) {
                std::vector<double> s(S2);
                double m = -INFINITY;
                for (int64_t j = 0; j < S2; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < D; d++)
                        dot += Q[loff(li, B, S1, N1, D, b, n, i, d)] * K[loff(li, B, S2, N2, D, b, n / (N1 / N2), j, d)];
                    s[j] = scale * dot;
                    if (!masked(b, n, i, j)) m = std::max(m, s[j]);
                }
                double sum = 0;
                for (int64_t j = 0; j < S2; j++)
                    if (!masked(b, n, i, j)) sum += std::exp(s[j] - m);
                for (int64_t j = 0; j < S2; j++) {
                    if (masked(b, n, i, j)) continue;
                    double p = std::exp(s[j] - m) / sum;
                    for (int64_t d = 0; d < D; d++)
                        O[loff(lo, B, S1, N1, D, b, n, i, d)] += p * V[loff(li, B, S2, N2, D, b, n / (N1 / N2), j, d)];
                }
            }
    return O;
}

static void inference() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* PromptFlashAttentionV3: BNSD_BSND, grouped key heads, a causal [S1, S2] mask with
     * nextTokens 0, actualSeqLengthsKv (3, 7) */
    const int64_t B = 2, N1 = 4, N2 = 2, S1 = 5, S2 = 7, D = 8;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        Shape qs = lshape(BNSD, B, S1, N1, D), ks = lshape(BNSD, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), t, 90, 3), K = vals(numel(ks), t, 91, 3), V = vals(numel(ks), t, 92, 3);
        std::vector<double> M(static_cast<size_t>(S1 * S2));
        for (int64_t i = 0; i < S1; i++)
            for (int64_t j = 0; j < S2; j++) M[i * S2 + j] = j > i + 2 ? 1 : 0;
        Dev q = make(qs, t, Q), k = make(ks, t, K), v = make(ks, t, V), m = make({S1, S2}, ACL_BOOL, M);
        Dev o = make(lshape(BSND, B, S1, N1, D), t, {0});
        int64_t kvl[] = {3, 7};
        aclIntArray *kv = aclCreateIntArray(kvl, 2);
        char lay[] = "BNSD_BSND";
        RUN(S, aclnnPromptFlashAttentionV3, q.t, k.t, v.t, nullptr, m.t, nullptr, kv, nullptr, nullptr, nullptr, nullptr,
            nullptr, N1, 0.3, 2147483647, 0, lay, N2, 0, 1, o.t);
        auto want = infer_ref(BNSD, BSND, B, N1, N2, S1, S2, D, 0.3, Q, K, V, [&](int64_t b, int64_t, int64_t i, int64_t j) {
            return M[i * S2 + j] != 0 || j - i > 0 || j >= kvl[b];
        });
        char what[96];
        snprintf(what, sizeof what, "PromptFlashAttentionV3 %s BNSD_BSND mask, next 0, kv lengths", tname(t));
        compare(what, read(o), want, tol_of(t) * 3);
        if (t == ACL_FLOAT) {
            aclTensor *scale1 = q.t;
            expect_code("PromptFlashAttentionV3 with a quantScale1",
                        aclnnPromptFlashAttentionV3GetWorkspaceSize(q.t, k.t, v.t, nullptr, m.t, nullptr, kv, nullptr, scale1,
                                                                    nullptr, nullptr, nullptr, N1, 0.3, 2147483647, 0, lay,
                                                                    N2, 0, 1, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("PromptFlashAttentionV3 numKeyValueHeads 3 for 2 key heads",
                        aclnnPromptFlashAttentionV3GetWorkspaceSize(q.t, k.t, v.t, nullptr, m.t, nullptr, kv, nullptr, nullptr,
                                                                    nullptr, nullptr, nullptr, N1, 0.3, 2147483647, 0, lay,
                                                                    3, 0, 1, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            int64_t bad[] = {3, 9};
            aclIntArray *kv9 = aclCreateIntArray(bad, 2);
            expect_code("PromptFlashAttentionV3 actualSeqLengthsKv past S2",
                        aclnnPromptFlashAttentionV3GetWorkspaceSize(q.t, k.t, v.t, nullptr, m.t, nullptr, kv9, nullptr, nullptr,
                                                                    nullptr, nullptr, nullptr, N1, 0.3, 2147483647, 0, lay,
                                                                    N2, 0, 1, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            aclDestroyIntArray(kv9);
        }
        aclDestroyIntArray(kv);
        for (Dev *d : {&q, &k, &v, &m, &o}) release(*d);
    }
    /* IncreFlashAttentionV4: BSND query [B, 1, N1, D], one key/value tensor, a [B, S2] mask,
     * actualSeqLengths (6, 4) */
    {
        Shape qs = lshape(BSND, B, 1, N1, D), ks = lshape(BSND, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), ACL_FLOAT, 93, 3), K = vals(numel(ks), ACL_FLOAT, 94, 3),
                            V = vals(numel(ks), ACL_FLOAT, 95, 3), M(static_cast<size_t>(B * S2), 0.0);
        M[1] = 1;
        M[S2 + 2] = 1;
        Dev q = make(qs, ACL_FLOAT, Q), k = make(ks, ACL_FLOAT, K), v = make(ks, ACL_FLOAT, V), m = make({B, S2}, ACL_UINT8, M);
        Dev o = make(qs, ACL_FLOAT, {0});
        aclTensorList *kl = aclCreateTensorList(&k.t, 1), *vl = aclCreateTensorList(&v.t, 1);
        int64_t ql[] = {6, 4};
        aclIntArray *al = aclCreateIntArray(ql, 2);
        char lay[] = "BSND";
        RUN(S, aclnnIncreFlashAttentionV4, q.t, kl, vl, nullptr, m.t, al, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, N1, 0.25, lay, N2, 0, 0, o.t);
        auto want = infer_ref(BSND, BSND, B, N1, N2, 1, S2, D, 0.25, Q, K, V, [&](int64_t b, int64_t, int64_t, int64_t j) {
            return M[b * S2 + j] != 0 || j >= ql[b];
        });
        compare("IncreFlashAttentionV4 BSND [B, S2] mask, actualSeqLengths (6, 4)", read(o), want, 1e-5);
        expect_code("IncreFlashAttentionV4 with a UINT8 blocktable",
                    aclnnIncreFlashAttentionV4GetWorkspaceSize(q.t, kl, vl, nullptr, m.t, al, nullptr, nullptr, nullptr, nullptr,
                                                               nullptr, nullptr, nullptr, m.t, nullptr, N1, 0.25, lay, N2, 16,
                                                               0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("IncreFlashAttentionV4 null key list",
                    aclnnIncreFlashAttentionV4GetWorkspaceSize(q.t, nullptr, vl, nullptr, m.t, al, nullptr, nullptr, nullptr,
                                                               nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.25,
                                                               lay, N2, 0, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyIntArray(al);
        for (Dev *d : {&q, &m, &o}) release(*d);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        if (k.mem) aclrtFree(k.mem);
        if (v.mem) aclrtFree(v.mem);
    }
    /* FusedInferAttentionScoreV3 / V2: BSH, grouped key heads, actualSeqLengths (4, 5),
     * the log-sum-exp [B, N, S1, 1] */
    {
        const int64_t SQ = 5;
        Shape qs = lshape(BSH, B, SQ, N1, D), ks = lshape(BSH, B, SQ, N2, D);
        std::vector<double> Q = vals(numel(qs), ACL_FLOAT, 96, 3), K = vals(numel(ks), ACL_FLOAT, 97, 3),
                            V = vals(numel(ks), ACL_FLOAT, 98, 3);
        Dev q = make(qs, ACL_FLOAT, Q), k = make(ks, ACL_FLOAT, K), v = make(ks, ACL_FLOAT, V), o = make(qs, ACL_FLOAT, {0});
        Dev lse = make({B, N1, SQ, 1}, ACL_FLOAT, {0});
        aclTensorList *kl = aclCreateTensorList(&k.t, 1), *vl = aclCreateTensorList(&v.t, 1);
        int64_t qlv[] = {4, 5};
        aclIntArray *ql = aclCreateIntArray(qlv, 2);
        char lay[] = "BSH";
        for (int ver = 3; ver >= 2; ver--) {
            uint64_t ws_ = 0;
            aclOpExecutor *ex_ = nullptr;
            if (ver == 3)
                NN(aclnnFusedInferAttentionScoreV3GetWorkspaceSize(
                    q.t, kl, vl, nullptr, nullptr, ql, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                    nullptr, N1, 0.35, 2147483647, 2147483647, lay, N2, 0, 0, 0, 0, true, 0, 0, o.t, lse.t, &ws_, &ex_));
            else
                NN(aclnnFusedInferAttentionScoreV2GetWorkspaceSize(
                    q.t, kl, vl, nullptr, nullptr, ql, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.35,
                    2147483647, 2147483647, lay, N2, 0, 0, 0, 0, true, 0, 0, o.t, lse.t, &ws_, &ex_));
            NN(ver == 3 ? aclnnFusedInferAttentionScoreV3(nullptr, ws_, ex_, S) : aclnnFusedInferAttentionScoreV2(nullptr, ws_, ex_, S));
            CHECK(aclrtSynchronizeStream(S));
            auto want = infer_ref(BSH, BSH, B, N1, N2, SQ, SQ, D, 0.35, Q, K, V,
                                  [&](int64_t b, int64_t, int64_t i, int64_t) { return i >= qlv[b]; });
            /* rows past the query length are zero; their log-sum-exp is not compared */
            char what[96];
            snprintf(what, sizeof what, "FusedInferAttentionScoreV%d BSH, query lengths (4, 5)", ver);
            compare(what, read(o), want, 1e-5);
            std::vector<double> got = read(lse), wl;
            for (int64_t b = 0; b < B; b++)
                for (int64_t n = 0; n < N1; n++)
                    for (int64_t i = 0; i < SQ; i++) {
                        if (i >= qlv[b]) {
                            got[static_cast<size_t>((b * N1 + n) * SQ + i)] = 0;
                            wl.push_back(0);
                            continue;
                        }
                        double m = -INFINITY, sum = 0;
                        std::vector<double> sc(SQ);
                        for (int64_t j = 0; j < SQ; j++) {
                            double dot = 0;
                            for (int64_t d = 0; d < D; d++)
                                dot += Q[loff(BSH, B, SQ, N1, D, b, n, i, d)] * K[loff(BSH, B, SQ, N2, D, b, n / 2, j, d)];
                            sc[j] = 0.35 * dot;
                            m = std::max(m, sc[j]);
                        }
                        for (double x : sc) sum += std::exp(x - m);
                        wl.push_back(m + std::log(sum));
                    }
            snprintf(what, sizeof what, "FusedInferAttentionScoreV%d softmaxLse", ver);
            compare(what, got, wl, 1e-5);
        }
        Dev lbad = make({B, N1, SQ, 8}, ACL_FLOAT, {0});
        expect_code("FusedInferAttentionScoreV3 softmaxLse [B, N, S, 8]",
                    aclnnFusedInferAttentionScoreV3GetWorkspaceSize(
                        q.t, kl, vl, nullptr, nullptr, ql, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, N1, 0.35, 2147483647, 2147483647, lay, N2, 0, 0, 0, 0, true, 0, 0, o.t,
                        lbad.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("FusedInferAttentionScoreV3 with a queryRope",
                    aclnnFusedInferAttentionScoreV3GetWorkspaceSize(
                        q.t, kl, vl, nullptr, nullptr, ql, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        q.t, nullptr, nullptr, N1, 0.35, 2147483647, 2147483647, lay, N2, 0, 0, 0, 0, true, 0, 0, o.t,
                        lse.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyIntArray(ql);
        for (Dev *d : {&q, &o, &lse, &lbad}) release(*d);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        if (k.mem) aclrtFree(k.mem);
        if (v.mem) aclrtFree(v.mem);
    }
    printf("ok inference\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    rms_norm();
    rope();
    swiglu();
    attention();
    inference();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
