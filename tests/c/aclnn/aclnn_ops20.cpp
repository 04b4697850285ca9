/* Operators of CANN's experimental set (hicann ops-math / ops-nn), against host references
 * (float64): TanhGrad, AsinGrad, AcoshGrad, SoftmaxGrad, LogSoftmaxV2, FloorDiv, RealDiv,
 * TruncateDiv, TruncateMod, ReluGradV3, ReluGradV4, EluV2, HuberLoss, HingeLoss,
 * HingeEmbeddingLoss, LpLoss, MseLossGrad, MseLossOut, GaussianNllLoss (+Grad), DiagPart,
 * AssignSub, TensorMove, AxpyV2, BiasAdd, ReduceMinV2, ApplyGradientDescent; each with documented argument errors
 * (ACLNN_ERR_PARAM_NULLPTR 161001 / ACLNN_ERR_PARAM_INVALID 161002).
 * Tolerances: data movement, divisions of integers and selections exactly; float32 values
 * to 1e-6 relative (computed in float64 and rounded once), float16 to 1e-3; reductions to
 * 1e-5. Inputs include transposed and strided views. */
#include <cmath>
#include <string>
#include "ops_ref.h"
#include "aclnnop/aclnn_tanh_grad.h"
#include "aclnnop/aclnn_asin_grad.h"
#include "aclnnop/aclnn_acosh_grad.h"
#include "aclnnop/aclnn_softmax_grad.h"
#include "aclnnop/aclnn_log_softmax_v2.h"
#include "aclnnop/aclnn_floor_div.h"
#include "aclnnop/aclnn_real_div.h"
#include "aclnnop/aclnn_truncate_div.h"
#include "aclnnop/aclnn_truncate_mod.h"
#include "aclnnop/aclnn_relu_grad_v3.h"
#include "aclnnop/aclnn_relu_grad_v4.h"
#include "aclnnop/aclnn_elu_v2.h"
#include "aclnnop/aclnn_huber_loss.h"
#include "aclnnop/aclnn_hinge_loss.h"
#include "aclnnop/aclnn_hinge_embedding_loss.h"
#include "aclnnop/aclnn_lp_loss.h"
#include "aclnnop/aclnn_mse_loss_grad.h"
#include "aclnnop/aclnn_mse_loss_out.h"
#include "aclnnop/aclnn_gaussian_nll_loss.h"
#include "aclnnop/aclnn_gaussian_nll_loss_grad.h"
#include "aclnnop/aclnn_diag_part.h"
#include "aclnnop/aclnn_assign_sub.h"
#include "aclnnop/aclnn_tensor_move.h"
#include "aclnnop/aclnn_axpy_v2.h"
#include "aclnnop/aclnn_bias_add.h"
#include "aclnnop/aclnn_reduce_min_v2.h"
#include "aclnnop/aclnn_apply_gradient_descent.h"

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

static double tol(aclDataType t) { return t == ACL_FLOAT ? 1e-6 : t == ACL_FLOAT16 ? 1e-3 : 8e-3; }

/* want[i] = f(a[i], b[i]) rounded to t */
template <typename F>
static std::vector<double> ref2(const std::vector<double> &a, const std::vector<double> &b, aclDataType t, F f) {
    std::vector<double> r(a.size());
    for (size_t i = 0; i < a.size(); i++) r[i] = as_type(f(a[i], b[i]), t);
    return r;
}

/* float32 roundings of a float64 reference */
static std::vector<double> as(const std::vector<double> &v) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, ACL_FLOAT);
    return r;
}

static void gradients() {
    const Shape sh{3, 4};
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        for (Layout l : {CONTIG, TRANSPOSED, STRIDED}) {
            char what[96];
            /* y in (-1, 1) for tanh and asin, > 0.5 for acosh */
            std::vector<double> y = values(12, t, 1), dy = values(12, t, 2), yp = values(12, t, 3, false, true);
            for (auto &v : y) v = as_type(v / 6.5, t);
            Dev Y = make(sh, t, y, l), G = make(sh, t, dy), YP = make(sh, t, yp, l), O = make(sh, t, {});
            RUN(S, aclnnTanhGrad, Y.t, G.t, O.t);
            snprintf(what, sizeof what, "TanhGrad %s %s", dname(t), lname(l));
            compare(what, read(O), ref2(y, dy, t, [](double y, double g) { return g * (1 - y * y); }), tol(t));
            RUN(S, aclnnAsinGrad, Y.t, G.t, O.t);
            snprintf(what, sizeof what, "AsinGrad %s %s", dname(t), lname(l));
            compare(what, read(O), ref2(y, dy, t, [](double y, double g) { return g / std::sqrt(1 - y * y); }), tol(t));
            RUN(S, aclnnAcoshGrad, YP.t, G.t, O.t);
            snprintf(what, sizeof what, "AcoshGrad %s %s", dname(t), lname(l));
            compare(what, read(O), ref2(yp, dy, t, [](double y, double g) { return g / std::sinh(y); }), tol(t));
            for (Dev *d : {&Y, &G, &YP, &O}) release(*d);
        }
    }
    /* SoftmaxGrad over the last axis, LogSoftmaxV2 over dim 0 of a transposed view */
    std::vector<double> x = values(12, ACL_FLOAT, 4), dy = values(12, ACL_FLOAT, 5);
    std::vector<double> y(12), want(12);
    for (int r = 0; r < 3; r++) {
        double m = -1e300, s = 0, dot = 0;
        for (int c = 0; c < 4; c++) m = std::max(m, x[r * 4 + c]);
        for (int c = 0; c < 4; c++) s += std::exp(x[r * 4 + c] - m);
        for (int c = 0; c < 4; c++) y[r * 4 + c] = as_type(std::exp(x[r * 4 + c] - m) / s, ACL_FLOAT);
        for (int c = 0; c < 4; c++) dot += y[r * 4 + c] * dy[r * 4 + c];
        for (int c = 0; c < 4; c++) want[r * 4 + c] = y[r * 4 + c] * (dy[r * 4 + c] - dot);
    }
    Dev Y = make(sh, ACL_FLOAT, y, STRIDED), G = make(sh, ACL_FLOAT, dy, TRANSPOSED), O = make(sh, ACL_FLOAT, {});
    RUN(S, aclnnSoftmaxGrad, Y.t, G.t, O.t);
    compare("SoftmaxGrad float32 strided/transposed", read(O), want, 1e-5);
    Dev X = make(sh, ACL_FLOAT, x, TRANSPOSED);
    RUN(S, aclnnLogSoftmaxV2, X.t, 0, O.t);
    for (int c = 0; c < 4; c++) {
        double m = -1e300, s = 0;
        for (int r = 0; r < 3; r++) m = std::max(m, x[r * 4 + c]);
        for (int r = 0; r < 3; r++) s += std::exp(x[r * 4 + c] - m);
        for (int r = 0; r < 3; r++) want[r * 4 + c] = x[r * 4 + c] - m - std::log(s);
    }
    compare("LogSoftmaxV2 dim 0 transposed", read(O), want, 1e-6);

    /* errors */
    Dev H = make(sh, ACL_FLOAT16, {}), I = make(sh, ACL_INT32, {}), W = make({4, 3}, ACL_FLOAT, {});
    expect_code("TanhGrad null dy", aclnnTanhGradGetWorkspaceSize(Y.t, nullptr, O.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("TanhGrad mixed types", aclnnTanhGradGetWorkspaceSize(Y.t, H.t, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("AsinGrad int32", aclnnAsinGradGetWorkspaceSize(I.t, I.t, I.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("AsinGrad shapes differ", aclnnAsinGradGetWorkspaceSize(Y.t, G.t, W.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("AcoshGrad null y", aclnnAcoshGradGetWorkspaceSize(nullptr, G.t, O.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SoftmaxGrad shapes differ", aclnnSoftmaxGradGetWorkspaceSize(Y.t, W.t, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("LogSoftmaxV2 dim 2 of 2-D", aclnnLogSoftmaxV2GetWorkspaceSize(X.t, 2, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("LogSoftmaxV2 null out", aclnnLogSoftmaxV2GetWorkspaceSize(X.t, 0, nullptr, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&Y, &G, &O, &X, &H, &I, &W}) release(*d);
    printf("ok gradients\n");
}

static double trunc_mod(double a, double b) { return a - std::trunc(a / b) * b; }

static void divisions() {
    const Shape sh{4, 5};
    for (aclDataType t : {ACL_FLOAT, ACL_INT32, ACL_INT8}) {
        std::vector<double> a = values(20, t, 6), b = values(20, t, 7, true);
        Dev A = make(sh, t, a, t == ACL_FLOAT ? TRANSPOSED : CONTIG), B = make(sh, t, b, STRIDED), O = make(sh, t, {});
        double tl = t == ACL_FLOAT ? 1e-6 : 0;
        char what[64];
        RUN(S, aclnnFloorDiv, A.t, B.t, O.t);
        snprintf(what, sizeof what, "FloorDiv %s", dname(t));
        compare(what, read(O), ref2(a, b, t, [](double x, double y) { return std::floor(x / y); }), tl);
        RUN(S, aclnnTruncateDiv, A.t, B.t, O.t);
        snprintf(what, sizeof what, "TruncateDiv %s", dname(t));
        compare(what, read(O), ref2(a, b, t, [](double x, double y) { return std::trunc(x / y); }), tl);
        RUN(S, aclnnTruncateMod, A.t, B.t, O.t);
        snprintf(what, sizeof what, "TruncateMod %s", dname(t));
        compare(what, read(O), ref2(a, b, t, trunc_mod), t == ACL_FLOAT ? 1e-5 : 0);
        if (t != ACL_INT8) {
            RUN(S, aclnnRealDiv, A.t, B.t, O.t);
            snprintf(what, sizeof what, "RealDiv %s", dname(t));
            compare(what, read(O),
                    ref2(a, b, t, [t](double x, double y) { return t == ACL_INT32 ? std::trunc(x / y) : x / y; }), tl);
        }
        for (Dev *d : {&A, &B, &O}) release(*d);
    }
    /* RealDiv of bool gives float; TruncateDiv of mixed types gives float */
    Dev BA = make({4}, ACL_BOOL, {1, 0, 1, 0}), BB = make({4}, ACL_BOOL, {1, 1, 0, 0}), BF = make({4}, ACL_FLOAT, {});
    RUN(S, aclnnRealDiv, BA.t, BB.t, BF.t);
    compare("RealDiv bool -> float", read(BF), {1, 0, INFINITY, NAN}, 0);
    Dev MI = make({4}, ACL_INT32, {7, -7, 9, -9}), MF = make({4}, ACL_FLOAT, {2, 2, -4, 4});
    RUN(S, aclnnTruncateDiv, MI.t, MF.t, BF.t);
    compare("TruncateDiv int32 / float32 -> float32", read(BF), {3, -3, -2, -2}, 0);
    /* errors */
    Dev I = make({4}, ACL_INT32, {}), L = make({5}, ACL_FLOAT, {}), D = make({4}, ACL_DOUBLE, {});
    expect_code("FloorDiv null self_y", aclnnFloorDivGetWorkspaceSize(MF.t, nullptr, BF.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FloorDiv double", aclnnFloorDivGetWorkspaceSize(D.t, D.t, D.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("FloorDiv out shape", aclnnFloorDivGetWorkspaceSize(MF.t, MF.t, L.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("TruncateMod mixed types", aclnnTruncateModGetWorkspaceSize(MI.t, MF.t, BF.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("TruncateDiv mixed types into int32", aclnnTruncateDivGetWorkspaceSize(MI.t, MF.t, I.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("RealDiv bool into bool", aclnnRealDivGetWorkspaceSize(BA.t, BB.t, BA.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("RealDiv null out", aclnnRealDivGetWorkspaceSize(MF.t, MF.t, nullptr, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&BA, &BB, &BF, &MI, &MF, &I, &L, &D}) release(*d);
    printf("ok divisions\n");
}

static void activations() {
    const Shape sh{3, 4};
    std::vector<double> x = values(12, ACL_FLOAT, 8), g = values(12, ACL_FLOAT, 9);
    x[0] = 0;
    Dev X = make(sh, ACL_FLOAT, x, TRANSPOSED), G = make(sh, ACL_FLOAT, g, STRIDED), O = make(sh, ACL_FLOAT, {});
    RUN(S, aclnnReluGradV3, X.t, G.t, O.t);
    compare("ReluGradV3", read(O), ref2(x, g, ACL_FLOAT, [](double x, double g) { return x > 0 ? g : 0; }), 0);
    Dev G1 = make({1}, ACL_FLOAT, {2.5});
    RUN(S, aclnnReluGradV3, X.t, G1.t, O.t);
    compare("ReluGradV3 one-element gradient", read(O), ref2(x, x, ACL_FLOAT, [](double x, double) { return x > 0 ? 2.5 : 0; }), 0);
    std::vector<double> mask(12);
    for (int i = 0; i < 12; i++) mask[i] = x[i] > 0;
    Dev M = make(sh, ACL_UINT8, mask, TRANSPOSED);
    int32_t zero = 0, one = 1;
    aclScalar *th = aclCreateScalar(&zero, ACL_INT32), *th1 = aclCreateScalar(&one, ACL_INT32);
    RUN(S, aclnnReluGradV4, G.t, M.t, th, O.t);
    compare("ReluGradV4", read(O), ref2(g, mask, ACL_FLOAT, [](double g, double m) { return m != 0 ? g : 0; }), 0);
    float al = 0.5f, sc = 2.0f, isc = 1.5f;
    aclScalar *A = aclCreateScalar(&al, ACL_FLOAT), *SC = aclCreateScalar(&sc, ACL_FLOAT), *IS = aclCreateScalar(&isc, ACL_FLOAT);
    RUN(S, aclnnEluV2, X.t, A, SC, IS, O.t);
    compare("EluV2", read(O),
            ref2(x, x, ACL_FLOAT, [](double x, double) { return x > 0 ? 2.0 * x : 2.0 * 0.5 * (std::exp(1.5 * x) - 1); }), 1e-6);
    /* errors */
    Dev F16 = make(sh, ACL_FLOAT16, {}), W = make({4, 3}, ACL_FLOAT, {});
    expect_code("ReluGradV3 null z", aclnnReluGradV3GetWorkspaceSize(X.t, G.t, nullptr, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ReluGradV3 shapes differ", aclnnReluGradV3GetWorkspaceSize(X.t, W.t, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReluGradV4 threshold 1", aclnnReluGradV4GetWorkspaceSize(G.t, M.t, th1, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReluGradV4 float mask", aclnnReluGradV4GetWorkspaceSize(G.t, X.t, th, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReluGradV4 null threshold", aclnnReluGradV4GetWorkspaceSize(G.t, M.t, nullptr, O.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ReluGradV4 out type", aclnnReluGradV4GetWorkspaceSize(G.t, M.t, th, F16.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("EluV2 null alpha", aclnnEluV2GetWorkspaceSize(X.t, nullptr, SC, IS, O.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("EluV2 out type", aclnnEluV2GetWorkspaceSize(X.t, A, SC, IS, F16.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    for (aclScalar *s : {th, th1, A, SC, IS}) aclDestroyScalar(s);
    for (Dev *d : {&X, &G, &O, &G1, &M, &F16, &W}) release(*d);
    printf("ok activations\n");
}

static double reduce(const std::vector<double> &l, int r) {
    if (r == 0) return 0;
    double s = 0;
    for (double v : l) s += v;
    return r == 1 ? s / l.size() : s;
}

static void losses() {
    const Shape sh{3, 4};
    const char *names[] = {"none", "mean", "sum"};
    std::vector<double> x = values(12, ACL_FLOAT, 10), t = values(12, ACL_FLOAT, 11);
    Dev X = make(sh, ACL_FLOAT, x, TRANSPOSED), T = make(sh, ACL_FLOAT, t, STRIDED), O = make(sh, ACL_FLOAT, {});
    Dev S0 = make({}, ACL_FLOAT, {});
    /* Huber */
    RUN(S, aclnnHuberLoss, X.t, T.t, 1.5f, O.t);
    compare("HuberLoss delta 1.5", read(O), ref2(x, t, ACL_FLOAT, [](double a, double b) {
                double e = std::fabs(a - b);
                return e <= 1.5 ? 0.5 * e * e : 1.5 * (e - 0.75);
            }), 1e-6);
    /* Hinge: target +-1 */
    std::vector<double> pm(12);
    for (int i = 0; i < 12; i++) pm[i] = (i % 3 == 0) ? -1 : 1;
    Dev PM = make(sh, ACL_FLOAT, pm, TRANSPOSED);
    RUN(S, aclnnHingeLoss, X.t, PM.t, O.t);
    compare("HingeLoss", read(O), ref2(x, pm, ACL_FLOAT, [](double a, double b) { return std::max(0.0, 1 - a * b); }), 1e-6);
    /* HingeEmbedding, Lp, with each reduction */
    std::vector<double> he(12), l1(12);
    for (int i = 0; i < 12; i++) {
        he[i] = pm[i] == 1 ? x[i] : std::max(0.0, 0.8 - x[i]);
        l1[i] = std::fabs(x[i] - t[i]);
    }
    for (int r = 0; r < 3; r++) {
        char what[64];
        Dev &out = r == 0 ? O : S0;
        RUN(S, aclnnHingeEmbeddingLoss, X.t, PM.t, 0.8, const_cast<char *>(names[r]), out.t);
        snprintf(what, sizeof what, "HingeEmbeddingLoss %s", names[r]);
        compare(what, read(out), r == 0 ? as(he) : std::vector<double>{reduce(he, r)}, 1e-5);
        RUN(S, aclnnLpLoss, X.t, T.t, 1, names[r], out.t);
        snprintf(what, sizeof what, "LpLoss p=1 %s", names[r]);
        compare(what, read(out), r == 0 ? as(l1) : std::vector<double>{reduce(l1, r)}, 1e-5);
    }
    /* MseLossGrad: (self, target, gradOutput) with gradOutput broadcast from [4] */
    std::vector<double> g4 = values(4, ACL_FLOAT, 12), mg(12);
    Dev G4 = make({4}, ACL_FLOAT, g4);
    for (int r = 1; r < 3; r++) {
        for (int i = 0; i < 12; i++) mg[i] = 2 * (x[i] - t[i]) * g4[i % 4] / (r == 1 ? 12 : 1);
        RUN(S, aclnnMseLossGrad, X.t, T.t, G4.t, const_cast<char *>(names[r]), O.t);
        compare(r == 1 ? "MseLossGrad mean" : "MseLossGrad sum", read(O), as(mg), 1e-6);
    }
    /* MseLossOut: mean and sum over axis 0 only */
    Dev O4 = make({4}, ACL_FLOAT, {});
    for (int r = 0; r < 3; r++) {
        Dev &out = r == 0 ? O : O4;
        RUN(S, aclnnMseLossOut, X.t, T.t, r, out.t);
        std::vector<double> want(r == 0 ? 12 : 4, 0);
        for (int i = 0; i < 12; i++) {
            double d = (x[i] - t[i]) * (x[i] - t[i]);
            if (r == 0) want[i] = d;
            else want[i % 4] += r == 1 ? d / 3 : d;
        }
        char what[48];
        snprintf(what, sizeof what, "MseLossOut reduction %d", r);
        compare(what, read(out), as(want), 1e-5);
    }
    /* errors */
    Dev H = make(sh, ACL_FLOAT16, {}), W = make({4, 3}, ACL_FLOAT, {});
    expect_code("HuberLoss delta 0", aclnnHuberLossGetWorkspaceSize(X.t, T.t, 0.0f, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("HuberLoss null targets", aclnnHuberLossGetWorkspaceSize(X.t, nullptr, 1.0f, O.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("HuberLoss mixed types", aclnnHuberLossGetWorkspaceSize(X.t, H.t, 1.0f, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("HingeLoss shapes differ", aclnnHingeLossGetWorkspaceSize(X.t, W.t, O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("HingeEmbeddingLoss reduction \"max\"",
                aclnnHingeEmbeddingLossGetWorkspaceSize(X.t, PM.t, 1.0, const_cast<char *>("max"), S0.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("HingeEmbeddingLoss sum into [3, 4]",
                aclnnHingeEmbeddingLossGetWorkspaceSize(X.t, PM.t, 1.0, const_cast<char *>("sum"), O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("LpLoss p 2", aclnnLpLossGetWorkspaceSize(X.t, T.t, 2, "mean", S0.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("LpLoss null label", aclnnLpLossGetWorkspaceSize(X.t, nullptr, 1, "mean", S0.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MseLossGrad reduction \"avg\"",
                aclnnMseLossGradGetWorkspaceSize(X.t, T.t, G4.t, const_cast<char *>("avg"), O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("MseLossGrad gradOutput float16",
                aclnnMseLossGradGetWorkspaceSize(X.t, T.t, H.t, const_cast<char *>("mean"), O.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("MseLossOut reduction 3", aclnnMseLossOutGetWorkspaceSize(X.t, T.t, 3, O4.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("MseLossOut mean into 0-d", aclnnMseLossOutGetWorkspaceSize(X.t, T.t, 1, S0.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("MseLossOut null self", aclnnMseLossOutGetWorkspaceSize(nullptr, T.t, 1, O4.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&X, &T, &O, &S0, &PM, &G4, &O4, &H, &W}) release(*d);
    printf("ok losses\n");
}

static void gaussian() {
    const Shape sh{3, 4};
    const char *names[] = {"none", "mean", "sum"};
    std::vector<double> x = values(12, ACL_FLOAT, 13), t = values(12, ACL_FLOAT, 14);
    std::vector<double> v3 = values(3, ACL_FLOAT, 15, false, true);
    v3[1] = 0; /* clamped to eps */
    const double eps = 1e-3;
    Dev X = make(sh, ACL_FLOAT, x, TRANSPOSED), T = make(sh, ACL_FLOAT, t), V = make({3}, ACL_FLOAT, v3);
    Dev O = make(sh, ACL_FLOAT, {}), S1 = make({1}, ACL_FLOAT, {});
    /* var [3] lacks input's last dimension: row i uses var[i] */
    std::vector<double> l(12);
    for (int i = 0; i < 12; i++) {
        double v = std::max(v3[i / 4], eps), d = x[i] - t[i];
        l[i] = 0.5 * (std::log(v) + d * d / v) + 0.5 * std::log(2 * M_PI);
    }
    for (int r = 0; r < 3; r++) {
        Dev &out = r == 0 ? O : S1;
        RUN(S, aclnnGaussianNllLoss, X.t, T.t, V.t, true, eps, const_cast<char *>(names[r]), out.t);
        char what[64];
        snprintf(what, sizeof what, "GaussianNllLoss full %s", names[r]);
        compare(what, read(out), r == 0 ? as(l) : std::vector<double>{reduce(l, r)}, 1e-5);
    }
    /* gradients, mean: gradOutput one element */
    Dev G = make({}, ACL_FLOAT, {1.5}), GX = make(sh, ACL_FLOAT, {}), GV = make({3}, ACL_FLOAT, {});
    RUN(S, aclnnGaussianNllLossGrad, G.t, X.t, T.t, V.t, false, static_cast<float>(eps), "mean", GX.t, GV.t);
    std::vector<double> gx(12), gv(3, 0);
    for (int i = 0; i < 12; i++) {
        double v = std::max(v3[i / 4], eps), d = x[i] - t[i], k = 1.5 / 12;
        gx[i] = k * d / v;
        gv[i / 4] += k * 0.5 * (1 / v - d * d / (v * v));
    }
    compare("GaussianNllLossGrad mean gradInput", read(GX), as(gx), 1e-5);
    compare("GaussianNllLossGrad mean gradVar", read(GV), as(gv), 1e-5);
    /* target broadcast along one size-1 dimension, var [3, 1], none */
    std::vector<double> t1 = values(4, ACL_FLOAT, 16);
    Dev T1 = make({1, 4}, ACL_FLOAT, t1), V1 = make({3, 1}, ACL_FLOAT, v3), GN = make(sh, ACL_FLOAT, x, STRIDED),
        GV1 = make({3, 1}, ACL_FLOAT, {});
    RUN(S, aclnnGaussianNllLossGrad, GN.t, X.t, T1.t, V1.t, true, static_cast<float>(eps), "none", GX.t, GV1.t);
    std::fill(gv.begin(), gv.end(), 0);
    for (int i = 0; i < 12; i++) {
        double v = std::max(v3[i / 4], eps), d = x[i] - t1[i % 4];
        gx[i] = x[i] * d / v;
        gv[i / 4] += x[i] * 0.5 * (1 / v - d * d / (v * v));
    }
    compare("GaussianNllLossGrad none gradInput (target [1, 4])", read(GX), as(gx), 1e-5);
    compare("GaussianNllLossGrad none gradVar [3, 1]", read(GV1), as(gv), 1e-5);
    /* errors */
    Dev V4 = make({4, 3}, ACL_FLOAT, {}), H = make(sh, ACL_FLOAT16, {});
    expect_code("GaussianNllLoss eps 0", aclnnGaussianNllLossGetWorkspaceSize(X.t, T.t, V.t, false, 0.0, nullptr, S1.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GaussianNllLoss var [4, 3]", aclnnGaussianNllLossGetWorkspaceSize(X.t, T.t, V4.t, false, eps, nullptr, S1.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GaussianNllLoss null var", aclnnGaussianNllLossGetWorkspaceSize(X.t, T.t, nullptr, false, eps, nullptr, S1.t, &WS, &EX),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GaussianNllLoss float16 target", aclnnGaussianNllLossGetWorkspaceSize(X.t, H.t, V.t, false, eps, nullptr, S1.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GaussianNllLossGrad gradVar shape",
                aclnnGaussianNllLossGradGetWorkspaceSize(G.t, X.t, T.t, V.t, false, 1e-6f, "mean", GX.t, GV1.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GaussianNllLossGrad reduction \"batchmean\"",
                aclnnGaussianNllLossGradGetWorkspaceSize(G.t, X.t, T.t, V.t, false, 1e-6f, "batchmean", GX.t, GV.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GaussianNllLossGrad null gradInput",
                aclnnGaussianNllLossGradGetWorkspaceSize(G.t, X.t, T.t, V.t, false, 1e-6f, "mean", nullptr, GV.t, &WS, &EX),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&X, &T, &V, &O, &S1, &G, &GX, &GV, &T1, &V1, &GN, &GV1, &V4, &H}) release(*d);
    printf("ok gaussian nll\n");
}

static void tensors() {
    /* DiagPart of a transposed 4x4 int32 and float16 matrix */
    for (aclDataType t : {ACL_INT32, ACL_FLOAT16}) {
        std::vector<double> m = values(16, t, 17);
        Dev M = make({4, 4}, t, m, TRANSPOSED), Y = make({4}, t, {});
        RUN(S, aclnnDiagPart, M.t, Y.t);
        compare(t == ACL_INT32 ? "DiagPart int32" : "DiagPart float16", read(Y), {m[0], m[5], m[10], m[15]}, 0);
        release(M);
        release(Y);
    }
    /* AssignSub int64 and float32 (varOut the var itself) */
    std::vector<double> a = values(6, ACL_INT64, 18), b = values(6, ACL_INT64, 19);
    Dev A = make({2, 3}, ACL_INT64, a, STRIDED), B = make({2, 3}, ACL_INT64, b, TRANSPOSED), O = make({2, 3}, ACL_INT64, {});
    RUN(S, aclnnAssignSub, A.t, B.t, O.t);
    compare("AssignSub int64", read(O), ref2(a, b, ACL_INT64, [](double x, double y) { return x - y; }), 0);
    std::vector<double> fa = values(6, ACL_FLOAT, 20), fb = values(6, ACL_FLOAT, 21);
    Dev FA = make({2, 3}, ACL_FLOAT, fa), FB = make({2, 3}, ACL_FLOAT, fb);
    RUN(S, aclnnAssignSub, FA.t, FB.t, FA.t);
    compare("AssignSub float32 in place", read(FA), ref2(fa, fb, ACL_FLOAT, [](double x, double y) { return x - y; }), 1e-6);
    /* TensorMove of a strided bf16 view and a bool tensor */
    std::vector<double> c = values(6, ACL_BF16, 22);
    Dev C = make({2, 3}, ACL_BF16, c, STRIDED), CO = make({2, 3}, ACL_BF16, {});
    RUN(S, aclnnTensorMove, C.t, CO.t);
    compare("TensorMove bf16 strided", read(CO), c, 0);
    Dev BO = make({4}, ACL_BOOL, {1, 0, 0, 1}), BO2 = make({4}, ACL_BOOL, {});
    RUN(S, aclnnTensorMove, BO.t, BO2.t);
    compare("TensorMove bool", read(BO2), {1, 0, 0, 1}, 0);
    /* AxpyV2: float32 with an int32 alpha, float16 with a float alpha */
    int32_t three = 3;
    float mhalf = -0.5f;
    aclScalar *AL = aclCreateScalar(&three, ACL_INT32), *AF = aclCreateScalar(&mhalf, ACL_FLOAT);
    Dev FO = make({2, 3}, ACL_FLOAT, {});
    RUN(S, aclnnAxpyV2, FA.t, FB.t, AL, FO.t);
    std::vector<double> fa2 = read(FA);
    compare("AxpyV2 float32, int32 alpha", read(FO), ref2(fa2, fb, ACL_FLOAT, [](double x, double y) { return x + 3 * y; }), 1e-6);
    std::vector<double> ha = values(6, ACL_FLOAT16, 23), hb = values(6, ACL_FLOAT16, 24);
    Dev HA = make({2, 3}, ACL_FLOAT16, ha, TRANSPOSED), HB = make({2, 3}, ACL_FLOAT16, hb), HO = make({2, 3}, ACL_FLOAT16, {});
    RUN(S, aclnnAxpyV2, HA.t, HB.t, AF, HO.t);
    compare("AxpyV2 float16", read(HO), ref2(ha, hb, ACL_FLOAT16, [](double x, double y) { return x - 0.5 * y; }), 1e-3);
    /* errors */
    Dev R = make({3, 4}, ACL_FLOAT, {}), Y3 = make({3}, ACL_FLOAT, {}), Y4 = make({4}, ACL_FLOAT, {}), SQ = make({4, 4}, ACL_FLOAT, {});
    Dev D = make({2, 3}, ACL_DOUBLE, {}), I32 = make({2, 3}, ACL_INT32, {});
    double dv = 1;
    aclScalar *AD = aclCreateScalar(&dv, ACL_DOUBLE);
    expect_code("DiagPart not square", aclnnDiagPartGetWorkspaceSize(R.t, Y3.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("DiagPart y length", aclnnDiagPartGetWorkspaceSize(SQ.t, Y3.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("DiagPart null y", aclnnDiagPartGetWorkspaceSize(SQ.t, nullptr, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    (void)Y4;
    expect_code("AssignSub double", aclnnAssignSubGetWorkspaceSize(D.t, D.t, D.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("AssignSub mixed types", aclnnAssignSubGetWorkspaceSize(FA.t, I32.t, FA.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("TensorMove mixed types", aclnnTensorMoveGetWorkspaceSize(FA.t, I32.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("TensorMove null x", aclnnTensorMoveGetWorkspaceSize(nullptr, FA.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AxpyV2 double alpha", aclnnAxpyV2GetWorkspaceSize(FA.t, FB.t, AD, FO.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("AxpyV2 out type", aclnnAxpyV2GetWorkspaceSize(FA.t, FB.t, AL, I32.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("AxpyV2 null alpha", aclnnAxpyV2GetWorkspaceSize(FA.t, FB.t, nullptr, FO.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&A, &B, &O, &FA, &FB, &C, &CO, &BO, &BO2, &FO, &HA, &HB, &HO, &R, &Y3, &Y4, &SQ, &D, &I32})
        release(*d);
    for (aclScalar *s : {AL, AF, AD}) aclDestroyScalar(s);
    printf("ok tensors\n");
}

static void channels() {
    /* BiasAdd: channel last (NHWC, the default), channel 1 (NCHW), a 1-D x */
    std::vector<double> x = values(24, ACL_FLOAT, 25), b3 = values(3, ACL_FLOAT, 26), b4 = values(4, ACL_FLOAT, 27);
    Dev X = make({2, 3, 4}, ACL_FLOAT, x, TRANSPOSED), O = make({2, 3, 4}, ACL_FLOAT, {});
    Dev B3 = make({3}, ACL_FLOAT, b3), B4 = make({4}, ACL_FLOAT, b4, STRIDED);
    std::vector<double> want(24);
    RUN(S, aclnnBiasAdd, X.t, B4.t, nullptr, O.t);
    for (int i = 0; i < 24; i++) want[i] = as_type(x[i] + b4[i % 4], ACL_FLOAT);
    compare("BiasAdd NHWC (default)", read(O), want, 1e-6);
    RUN(S, aclnnBiasAdd, X.t, B3.t, const_cast<char *>("NCHW"), O.t);
    for (int i = 0; i < 24; i++) want[i] = as_type(x[i] + b3[(i / 4) % 3], ACL_FLOAT);
    compare("BiasAdd NCHW", read(O), want, 1e-6);
    Dev I1 = make({4}, ACL_INT32, {1, 2, 3, 4}), IB = make({4}, ACL_INT32, {10, 20, 30, 40}), IO = make({4}, ACL_INT32, {});
    RUN(S, aclnnBiasAdd, I1.t, IB.t, const_cast<char *>("NCHW"), IO.t);
    compare("BiasAdd 1-D int32", read(IO), {11, 22, 33, 44}, 0);
    expect_code("BiasAdd bias length", aclnnBiasAddGetWorkspaceSize(X.t, B3.t, const_cast<char *>("NHWC"), O.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BiasAdd format \"HWCN\"", aclnnBiasAddGetWorkspaceSize(X.t, B4.t, const_cast<char *>("HWCN"), O.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("BiasAdd null bias", aclnnBiasAddGetWorkspaceSize(X.t, nullptr, nullptr, O.t, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    /* ReduceMinV2 of a transposed [3, 4] float16 */
    std::vector<double> m = values(12, ACL_FLOAT16, 28);
    Dev M = make({3, 4}, ACL_FLOAT16, m, TRANSPOSED), R0 = make({4}, ACL_FLOAT16, {}), R1 = make({3, 1}, ACL_FLOAT16, {});
    RUN(S, aclnnReduceMinV2, M.t, 0, 0, R0.t);
    std::vector<double> w0(4, 1e300), w1(3, 1e300);
    for (int i = 0; i < 12; i++) {
        w0[i % 4] = std::min(w0[i % 4], m[i]);
        w1[i / 4] = std::min(w1[i / 4], m[i]);
    }
    compare("ReduceMinV2 axes 0", read(R0), w0, 0);
    RUN(S, aclnnReduceMinV2, M.t, 1, 1, R1.t);
    compare("ReduceMinV2 axes 1 keepdims", read(R1), w1, 0);
    Dev X3 = make({2, 3, 4}, ACL_FLOAT16, {});
    expect_code("ReduceMinV2 axes 2", aclnnReduceMinV2GetWorkspaceSize(M.t, 2, 0, R0.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReduceMinV2 3-D x", aclnnReduceMinV2GetWorkspaceSize(X3.t, 0, 0, R0.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReduceMinV2 keepdims shape", aclnnReduceMinV2GetWorkspaceSize(M.t, 1, 0, R1.t, &WS, &EX), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReduceMinV2 null y", aclnnReduceMinV2GetWorkspaceSize(M.t, 1, 0, nullptr, &WS, &EX), ACLNN_ERR_PARAM_NULLPTR);
    /* ApplyGradientDescent on a strided var */
    std::vector<double> v = values(12, ACL_FLOAT, 29), d = values(12, ACL_FLOAT, 30);
    Dev V = make({3, 4}, ACL_FLOAT, v, STRIDED), D = make({3, 4}, ACL_FLOAT, d, TRANSPOSED), A = make({1}, ACL_FLOAT, {0.25});
    RUN(S, aclnnApplyGradientDescent, V.t, A.t, D.t);
    compare("ApplyGradientDescent", read(V), ref2(v, d, ACL_FLOAT, [](double v, double d) { return v - 0.25 * d; }), 1e-6);
    Dev A2 = make({2}, ACL_FLOAT, {}), AH = make({1}, ACL_FLOAT16, {});
    expect_code("ApplyGradientDescent two-element alpha", aclnnApplyGradientDescentGetWorkspaceSize(V.t, A2.t, D.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ApplyGradientDescent float16 alpha", aclnnApplyGradientDescentGetWorkspaceSize(V.t, AH.t, D.t, &WS, &EX),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ApplyGradientDescent null delta", aclnnApplyGradientDescentGetWorkspaceSize(V.t, A.t, nullptr, &WS, &EX),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *e : {&X, &O, &B3, &B4, &I1, &IB, &IO, &M, &R0, &R1, &X3, &V, &D, &A, &A2, &AH}) release(*e);
    printf("ok channels\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    gradients();
    divisions();
    activations();
    losses();
    gaussian();
    tensors();
    channels();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
