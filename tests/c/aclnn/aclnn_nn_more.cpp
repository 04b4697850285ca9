/* Operators of `nn_more.rs` against host references: StridedSlice (hand-derived slices with
 * negative strides, begin/end masks, ellipsis, new and shrunk axes), AddV3 and
 * InplaceAddV3 (host scalar + alpha * tensor), ApplyAdam (in place, float32 and float16),
 * DropoutV3 / DropoutV3Grad / DropoutGenMaskV2Tensor (the bit mask agrees with
 * aclnnDropoutGenMaskV2 for the same seed and offset; the outputs are the masked, scaled
 * input), DynamicQuantV3/V4 (INT8, pertoken / pertensor / perchannel, symmetric and
 * asymmetric, with smooth scales and MoE group indices; float32 host reference, ties to even), ReluV3 (NC1HWC0 x,
 * the bit mask packed along C0), HardShrink, Xlog1py (broadcast, x = 0 and NaN y), Expandv,
 * SqrtBackward.
 * Each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR 161001 /
 * ACLNN_ERR_PARAM_INVALID 161002). Tolerances: data movement exactly; float32 arithmetic
 * to 1e-6 relative; float16 to 2e-3. */
#include <algorithm>
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_strided_slice.h"
#include "aclnnop/aclnn_add_v3.h"
#include "aclnnop/aclnn_apply_adam.h"
#include "aclnnop/aclnn_dropout_v3.h"
#include "aclnnop/aclnn_dropout_v3_grad.h"
#include "aclnnop/aclnn_dropout_gen_mask.h"
#include "aclnnop/aclnn_dropout_gen_mask_v2.h"
#include "aclnnop/aclnn_dynamic_quant_v3.h"
#include "aclnnop/aclnn_dynamic_quant_v4.h"
#include "aclnnop/aclnn_relu_v3.h"
#include "aclnnop/aclnn_hard_shrink.h"
#include "aclnnop/aclnn_xlog1py.h"
#include "aclnnop/aclnn_expandv.h"
#include "aclnnop/aclnn_sqrt_backward.h"

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
static aclScalar *ds(double v) { return aclCreateScalar(&v, ACL_DOUBLE); }
static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }
static aclScalar *ls(int64_t v) { return aclCreateScalar(&v, ACL_INT64); }

static std::vector<double> as(const std::vector<double> &v, aclDataType t) {
    std::vector<double> r(v);
    for (auto &e : r) e = as_type(e, t);
    return r;
}

/* One slice of x [3, 4, 5] (element (a, b, c) = X[a*20 + b*5 + c]). */
static void slice_case(const char *what, Dev &x, const std::vector<double> &X, std::vector<int64_t> b,
                       std::vector<int64_t> e, std::vector<int64_t> s, int64_t bm, int64_t em, int64_t elm, int64_t nm,
                       int64_t sm, Shape oshape, const std::vector<double> &want) {
    (void)X;
    aclIntArray *B = ia(b), *E = ia(e), *St = ia(s);
    Dev o = make(oshape, x.dt, {0});
    RUN(S, aclnnStridedSlice, x.t, B, E, St, bm, em, elm, nm, sm, o.t);
    compare(what, read(o), want, 0);
    release(o);
    aclDestroyIntArray(B), aclDestroyIntArray(E), aclDestroyIntArray(St);
}

static void strided_slice() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_INT64, ACL_FLOAT16}) {
        std::vector<double> X = values(60, t, 3);
        Dev x = make({3, 4, 5}, t, X, t == ACL_FLOAT ? TRANSPOSED : STRIDED);
        auto at = [&](int a, int b, int c) { return X[a * 20 + b * 5 + c]; };
        /* x[1:3, 0:4:2, 4:0:-2] */
        std::vector<double> W;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                for (int k = 0; k < 2; k++) W.push_back(at(1 + i, 2 * j, 4 - 2 * k));
        slice_case("StridedSlice steps and a negative stride", x, X, {1, 0, 4}, {3, 4, 0}, {1, 2, -2}, 0, 0, 0, 0, 0,
                   {2, 2, 2}, W);
        /* x[:, 1:3] with begin/end masks on axis 0 (its begin and end values are ignored) */
        W.clear();
        for (int a = 0; a < 3; a++)
            for (int b = 1; b < 3; b++)
                for (int c = 0; c < 5; c++) W.push_back(at(a, b, c));
        slice_case("StridedSlice begin/end masks", x, X, {2, 1}, {1, 3}, {1, 1}, 1, 1, 0, 0, 0, {3, 2, 5}, W);
        /* x[..., None, 2]: ellipsis, new axis, shrunk axis */
        W.clear();
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 4; b++) W.push_back(at(a, b, 2));
        slice_case("StridedSlice ellipsis, new axis, shrink", x, X, {0, 0, 2}, {0, 0, 3}, {1, 1, 1}, 0, 0, 1, 2, 4,
                   {3, 4, 1}, W);
        /* x[-1, ::-1] with out-of-range ends clamped: begin -1 shrinks axis 0 */
        W.clear();
        for (int b = 3; b >= 0; b--)
            for (int c = 0; c < 5; c++) W.push_back(at(2, b, c));
        slice_case("StridedSlice negative index, reversed axis", x, X, {-1, 100}, {0, -100}, {1, -1}, 0, 0, 0, 0, 1,
                   {4, 5}, W);
        /* an empty slice: x[:, 3:1] */
        slice_case("StridedSlice empty", x, X, {0, 3}, {3, 1}, {1, 1}, 1, 1, 0, 0, 0, {3, 0, 5}, {});
        release(x);
    }
    Dev x = make({3, 4, 5}, ACL_FLOAT, {1}), o = make({2, 2, 2}, ACL_FLOAT, {0}), oi = make({2, 2, 2}, ACL_INT32, {0});
    aclIntArray *b = ia({1, 0, 4}), *e = ia({3, 4, 0}), *s = ia({1, 2, -2}), *s0 = ia({1, 0, 1}), *e2 = ia({3, 4});
    expect_code("StridedSlice zero stride", aclnnStridedSliceGetWorkspaceSize(x.t, b, e, s0, 0, 0, 0, 0, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("StridedSlice end shorter than begin",
                aclnnStridedSliceGetWorkspaceSize(x.t, b, e2, s, 0, 0, 0, 0, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("StridedSlice out of the wrong shape",
                aclnnStridedSliceGetWorkspaceSize(x.t, b, e, s, 1, 0, 0, 0, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("StridedSlice int32 out", aclnnStridedSliceGetWorkspaceSize(x.t, b, e, s, 0, 0, 0, 0, 0, oi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("StridedSlice two ellipsis bits",
                aclnnStridedSliceGetWorkspaceSize(x.t, b, e, s, 0, 0, 3, 0, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("StridedSlice null begin",
                aclnnStridedSliceGetWorkspaceSize(x.t, nullptr, e, s, 0, 0, 0, 0, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyIntArray(b), aclDestroyIntArray(e), aclDestroyIntArray(s), aclDestroyIntArray(s0), aclDestroyIntArray(e2);
    release(x), release(o), release(oi);
    printf("ok strided slice\n");
}

static void add_v3() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* float16 other computes in float32: out = 2.5 + 1.5 * y, rounded once to the output */
    for (aclDataType ot : {ACL_FLOAT16, ACL_FLOAT}) {
        std::vector<double> Y = values(6, ACL_FLOAT16, 4), W(6);
        for (int i = 0; i < 6; i++) W[i] = as_type(2.5f + 1.5f * static_cast<float>(Y[i]), ot);
        Dev y = make({2, 3}, ACL_FLOAT16, Y, STRIDED), o = make({2, 3}, ot, {0});
        aclScalar *s = ds(2.5), *al = fs(1.5f);
        RUN(S, aclnnAddV3, s, y.t, al, o.t);
        compare(ot == ACL_FLOAT ? "AddV3 float16 other, float32 out" : "AddV3 float16", read(o), W, ot == ACL_FLOAT ? 1e-6 : 2e-3);
        aclDestroyScalar(s), aclDestroyScalar(al);
        release(y), release(o);
    }
    {
        /* int32 with an integer scalar stays integral; with a double scalar and a float out
         * it computes in float */
        std::vector<double> Y = values(6, ACL_INT32, 5), W(6), WF(6);
        for (int i = 0; i < 6; i++) W[i] = 3 + 2 * Y[i], WF[i] = as_type(0.25 + 2 * Y[i], ACL_FLOAT);
        Dev y = make({3, 2}, ACL_INT32, Y, TRANSPOSED), o = make({3, 2}, ACL_INT32, {0}), of = make({3, 2}, ACL_FLOAT, {0});
        aclScalar *s = ls(3), *al = ls(2), *sd = ds(0.25), *af = fs(0.5f);
        RUN(S, aclnnAddV3, s, y.t, al, o.t);
        compare("AddV3 int32", read(o), W, 0);
        RUN(S, aclnnAddV3, sd, y.t, al, of.t);
        compare("AddV3 int32 other, double scalar, float out", read(of), WF, 1e-6);
        expect_code("AddV3 float alpha for an int32 computation",
                    aclnnAddV3GetWorkspaceSize(s, y.t, af, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("AddV3 float result to an int32 out", aclnnAddV3GetWorkspaceSize(sd, y.t, al, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        Dev bad = make({2, 3}, ACL_INT32, {0});
        expect_code("AddV3 out of another shape", aclnnAddV3GetWorkspaceSize(s, y.t, al, bad.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("AddV3 null alpha", aclnnAddV3GetWorkspaceSize(s, y.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        expect_code("AddV3 null self", aclnnAddV3GetWorkspaceSize(nullptr, y.t, al, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        /* in place: the result goes into other */
        RUN(S, aclnnInplaceAddV3, s, y.t, al);
        compare("InplaceAddV3 writes other", read(y), W, 0);
        expect_code("InplaceAddV3 null other", aclnnInplaceAddV3GetWorkspaceSize(s, nullptr, al, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyScalar(s), aclDestroyScalar(al), aclDestroyScalar(sd), aclDestroyScalar(af);
        release(y), release(o), release(of), release(bad);
    }
    printf("ok add v3\n");
}

static void apply_adam() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const double b1p = 0.9 * 0.9 * 0.9, b2p = 0.999 * 0.999 * 0.999, lr = 0.05, b1 = 0.9, b2 = 0.999, eps = 1e-6;
    for (int variant = 0; variant < 2; variant++) {
        aclDataType t = variant == 0 ? ACL_FLOAT : ACL_FLOAT16;
        bool nesterov = variant == 1;
        std::vector<double> P = values(6, t, 21), M = values(6, t, 22), G = values(6, t, 24);
        std::vector<double> V = values(6, t, 23, true, true);
        Dev p = make({2, 3}, t, P, STRIDED), m = make({2, 3}, t, M, TRANSPOSED), v = make({2, 3}, t, V);
        Dev g = make({2, 3}, t, G);
        Dev s1 = make({1}, ACL_FLOAT, {b1p}), s2 = make({1}, ACL_FLOAT, {b2p}), s3 = make({1}, ACL_FLOAT, {lr});
        Dev s4 = make({1}, ACL_FLOAT, {b1}), s5 = make({1}, ACL_FLOAT, {b2}), s6 = make({1}, ACL_FLOAT, {eps});
        RUN(S, aclnnApplyAdam, p.t, m.t, v.t, s1.t, s2.t, s3.t, s4.t, s5.t, s6.t, g.t, false, nesterov);
        double fb1p = as_type(b1p, ACL_FLOAT), fb2p = as_type(b2p, ACL_FLOAT), flr = as_type(lr, ACL_FLOAT);
        double fb1 = as_type(b1, ACL_FLOAT), fb2 = as_type(b2, ACL_FLOAT), feps = as_type(eps, ACL_FLOAT);
        double lrt = flr * std::sqrt(1 - fb2p) / (1 - fb1p);
        std::vector<double> WP(6), WM(6), WV(6);
        for (int i = 0; i < 6; i++) {
            WM[i] = fb1 * M[i] + (1 - fb1) * G[i];
            WV[i] = fb2 * V[i] + (1 - fb2) * G[i] * G[i];
            double num = nesterov ? WM[i] * fb1 + (1 - fb1) * G[i] : WM[i];
            WP[i] = P[i] - lrt * num / (feps + std::sqrt(WV[i]));
        }
        double tol = t == ACL_FLOAT ? 1e-6 : 2e-3;
        compare(nesterov ? "ApplyAdam float16 nesterov: var" : "ApplyAdam: var", read(p), as(WP, t), tol);
        compare("ApplyAdam: m updated in place", read(m), as(WM, t), tol);
        compare("ApplyAdam: v updated in place", read(v), as(WV, t), tol);
        if (variant == 0) {
            Dev two = make({2}, ACL_FLOAT, {0.1, 0.2}), h1 = make({1}, ACL_FLOAT16, {0.1}), mh = make({2, 3}, ACL_FLOAT16, {0});
            expect_code("ApplyAdam lr of shape [2]",
                        aclnnApplyAdamGetWorkspaceSize(p.t, m.t, v.t, s1.t, s2.t, two.t, s4.t, s5.t, s6.t, g.t, false, false,
                                                       &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ApplyAdam float16 beta1",
                        aclnnApplyAdamGetWorkspaceSize(p.t, m.t, v.t, s1.t, s2.t, s3.t, h1.t, s5.t, s6.t, g.t, false, false,
                                                       &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ApplyAdam m of another dtype",
                        aclnnApplyAdamGetWorkspaceSize(p.t, mh.t, v.t, s1.t, s2.t, s3.t, s4.t, s5.t, s6.t, g.t, false, false,
                                                       &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("ApplyAdam null grad",
                        aclnnApplyAdamGetWorkspaceSize(p.t, m.t, v.t, s1.t, s2.t, s3.t, s4.t, s5.t, s6.t, nullptr, false,
                                                       false, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            release(two), release(h1), release(mh);
        }
        for (Dev *d : {&p, &m, &v, &g, &s1, &s2, &s3, &s4, &s5, &s6}) release(*d);
    }
    printf("ok apply adam\n");
}

static bool bit(const std::vector<double> &mask, int i) { return (static_cast<int>(mask[i / 8]) >> (i % 8)) & 1; }

static void dropout_v3() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int N = 300, NB = 48; /* align(300, 128) / 8 */
    const double p = 0.3;
    std::vector<double> X = values(N, ACL_FLOAT, 31, true);
    Dev x = make({3, 100}, ACL_FLOAT, X, STRIDED), o = make({3, 100}, ACL_FLOAT, {0}), mask = make({NB}, ACL_UINT8, {0});
    RUN(S, aclnnDropoutV3, x.t, nullptr, p, 7, 8, o.t, mask.t);
    /* the same bits as aclnnDropoutGenMaskV2 with that seed and offset */
    Dev ref = make({NB}, ACL_UINT8, {0});
    aclIntArray *shape = ia({3, 100});
    RUN(S, aclnnDropoutGenMaskV2, shape, p, 7, 8, ACL_FLOAT, ref.t);
    std::vector<double> M = read(mask);
    compare("DropoutV3 mask equals DropoutGenMaskV2's", M, read(ref), 0);
    int kept = 0;
    std::vector<double> W(N);
    for (int i = 0; i < N; i++) {
        kept += bit(M, i);
        W[i] = bit(M, i) ? as_type(static_cast<float>(X[i]) * static_cast<float>(1 / (1 - p)), ACL_FLOAT) : 0;
    }
    compare("DropoutV3 out", read(o), W, 1e-6);
    g_checks++;
    if (kept < 170 || kept > 250) {
        printf("FAIL DropoutV3 kept %d of %d with p = 0.3\n", kept, N);
        g_fail++;
    }
    /* p = 0 copies and leaves the mask untouched; p = 1 zeroes */
    Dev keep = make({NB}, ACL_UINT8, {171});
    RUN(S, aclnnDropoutV3, x.t, nullptr, 0.0, 7, 0, o.t, keep.t);
    compare("DropoutV3 p = 0: out = input", read(o), X, 0);
    compare("DropoutV3 p = 0: mask untouched", read(keep), std::vector<double>(NB, 171), 0);
    RUN(S, aclnnDropoutV3, x.t, nullptr, 1.0, 7, 0, o.t, keep.t);
    compare("DropoutV3 p = 1: zeros", read(o), std::vector<double>(N, 0), 0);
    /* the gradient: gradY * bit * scale */
    std::vector<double> G = values(N, ACL_FLOAT16, 32), WG(N);
    Dev g = make({2, 150}, ACL_FLOAT16, G, TRANSPOSED), gx = make({2, 150}, ACL_FLOAT16, {0});
    const double scale = 1 / (1 - p);
    RUN(S, aclnnDropoutV3Grad, g.t, mask.t, scale, gx.t);
    for (int i = 0; i < N; i++) WG[i] = bit(M, i) ? as_type(static_cast<float>(G[i]) * static_cast<float>(scale), ACL_FLOAT16) : 0;
    compare("DropoutV3Grad float16", read(gx), WG, 2e-3);
    /* errors */
    Dev small = make({32}, ACL_UINT8, {0}), oi = make({3, 100}, ACL_INT32, {0});
    expect_code("DropoutV3 offset not a multiple of 4", aclnnDropoutV3GetWorkspaceSize(x.t, nullptr, p, 7, 3, o.t, mask.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutV3 p above 1", aclnnDropoutV3GetWorkspaceSize(x.t, nullptr, 1.5, 7, 0, o.t, mask.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutV3 short mask", aclnnDropoutV3GetWorkspaceSize(x.t, nullptr, p, 7, 0, o.t, small.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutV3 int32 out", aclnnDropoutV3GetWorkspaceSize(x.t, nullptr, p, 7, 0, oi.t, mask.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutV3 null maskOut", aclnnDropoutV3GetWorkspaceSize(x.t, nullptr, p, 7, 0, o.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("DropoutV3Grad short mask", aclnnDropoutV3GradGetWorkspaceSize(g.t, small.t, scale, gx.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutV3Grad null gradY", aclnnDropoutV3GradGetWorkspaceSize(nullptr, mask.t, scale, gx.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    /* GenMaskV2Tensor: seed and offset from device tensors, plus the scalar offset */
    Dev seed = make({1}, ACL_INT64, {7}), off = make({1}, ACL_INT64, {4}), gm = make({NB}, ACL_UINT8, {0});
    RUN(S, aclnnDropoutGenMaskV2Tensor, shape, p, seed.t, off.t, 4, ACL_FLOAT16, gm.t);
    compare("DropoutGenMaskV2Tensor = GenMaskV2(seed 7, offset 4 + 4)", read(gm), M, 0);
    Dev seed2 = make({2}, ACL_INT64, {7}), seedi = make({1}, ACL_INT32, {7});
    expect_code("DropoutGenMaskV2Tensor seed of shape [2]",
                aclnnDropoutGenMaskV2TensorGetWorkspaceSize(shape, p, seed2.t, off.t, 0, ACL_FLOAT, gm.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutGenMaskV2Tensor int32 seed",
                aclnnDropoutGenMaskV2TensorGetWorkspaceSize(shape, p, seedi.t, off.t, 0, ACL_FLOAT, gm.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutGenMaskV2Tensor int32 probDataType",
                aclnnDropoutGenMaskV2TensorGetWorkspaceSize(shape, p, seed.t, off.t, 0, ACL_INT32, gm.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DropoutGenMaskV2Tensor null offsetTensor",
                aclnnDropoutGenMaskV2TensorGetWorkspaceSize(shape, p, seed.t, nullptr, 0, ACL_FLOAT, gm.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyIntArray(shape);
    for (Dev *d : {&x, &o, &mask, &ref, &keep, &g, &gx, &small, &oi, &seed, &off, &gm, &seed2, &seedi}) release(*d);
    printf("ok dropout v3\n");
}

/* Host reference of dynamic int8 quantization: mode 0 pertoken, 1 pertensor, 2 perchannel
 * over x [B, R, H] (float32 arithmetic as the operator). */
static void dq_ref(const std::vector<double> &X, const std::vector<double> *sm, int B, int R, int H, int mode, bool asym,
                   std::vector<double> &Y, std::vector<double> &SC, std::vector<double> &OF,
                   const std::vector<int> *expert = nullptr) {
    int G = mode == 0 ? B * R : mode == 1 ? 1 : B * H;
    std::vector<float> in(X.size()), mx(G, -INFINITY), mn(G, INFINITY), am(G, 0);
    auto grp = [&](int b, int i, int j) { return mode == 0 ? b * R + i : mode == 1 ? 0 : b * H + j; };
    for (int b = 0; b < B; b++)
        for (int i = 0; i < R; i++)
            for (int j = 0; j < H; j++) {
                int k = (b * R + i) * H + j, g = grp(b, i, j);
                size_t si = expert ? static_cast<size_t>((*expert)[b * R + i] * H + j) : static_cast<size_t>(mode == 2 ? i : j);
                float f = sm ? static_cast<float>((*sm)[si]) : 1.0f;
                in[k] = static_cast<float>(X[k]) * f;
                mx[g] = std::max(mx[g], in[k]), mn[g] = std::min(mn[g], in[k]), am[g] = std::max(am[g], std::fabs(in[k]));
            }
    SC.assign(G, 0), OF.assign(G, 0), Y.assign(X.size(), 0);
    std::vector<float> sc(G), of(G);
    for (int g = 0; g < G; g++) {
        if (asym) {
            sc[g] = (mx[g] - mn[g]) / 255.0f;
            of[g] = sc[g] == 0 ? 0 : 127.0f - mx[g] / sc[g];
        } else {
            sc[g] = am[g] / 127.0f, of[g] = 0;
        }
        SC[g] = sc[g], OF[g] = of[g];
    }
    for (int b = 0; b < B; b++)
        for (int i = 0; i < R; i++)
            for (int j = 0; j < H; j++) {
                int k = (b * R + i) * H + j, g = grp(b, i, j);
                float q = sc[g] == 0 ? of[g] : in[k] / sc[g] + of[g];
                Y[k] = std::min(127.0f, std::max(-128.0f, std::nearbyint(q)));
            }
}

static void dynamic_quant_v3() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int B = 2, R = 3, H = 8;
    std::vector<double> X = values(B * R * H, ACL_FLOAT16, 41), SMH = values(H, ACL_FLOAT16, 42, true, true);
    std::vector<double> SMR = values(R, ACL_FLOAT16, 43, true, true);
    struct Case { const char *name; const char *mode; int m; bool asym; int smooth; bool v4; };
    const Case cases[] = {
        {"DynamicQuantV3 pertoken symmetric", "pertoken", 0, false, 0, false},
        {"DynamicQuantV3 pertensor symmetric with smooth scales", "pertensor", 1, false, 1, false},
        {"DynamicQuantV3 perchannel asymmetric with smooth scales", "perchannel", 2, true, 2, false},
        {"DynamicQuantV4 pertoken asymmetric", "pertoken", 0, true, 0, true},
        {"DynamicQuantV4 perchannel symmetric", "perchannel", 2, false, 0, true},
    };
    for (const Case &c : cases) {
        Shape ss = c.m == 0 ? Shape{B, R} : c.m == 1 ? Shape{1} : Shape{B, H};
        Dev x = make({B, R, H}, ACL_FLOAT16, X, STRIDED), y = make({B, R, H}, ACL_INT8, {0});
        Dev sc = make(ss, ACL_FLOAT, {0}), of = make(ss, ACL_FLOAT, {0});
        Dev sm = c.smooth == 1 ? make({H}, ACL_FLOAT16, SMH) : make({R}, ACL_FLOAT16, SMR);
        const aclTensor *smt = c.smooth ? sm.t : nullptr;
        const aclTensor *oft = c.asym ? of.t : nullptr;
        if (c.v4) {
            RUN(S, aclnnDynamicQuantV4, x.t, smt, nullptr, 2, !c.asym, c.mode, 0.0f, y.t, sc.t, oft);
        } else {
            RUN(S, aclnnDynamicQuantV3, x.t, smt, nullptr, 2, !c.asym, c.mode, y.t, sc.t, oft);
        }
        std::vector<double> WY, WS, WO;
        dq_ref(X, c.smooth == 1 ? &SMH : c.smooth == 2 ? &SMR : nullptr, B, R, H, c.m, c.asym, WY, WS, WO);
        compare(c.name, read(y), WY, 0);
        compare("DynamicQuantV3/V4 scale", read(sc), WS, 1e-6);
        if (c.asym) compare("DynamicQuantV3/V4 offset", read(of), WO, 1e-6);
        for (Dev *d : {&x, &y, &sc, &of, &sm}) release(*d);
    }
    {
        /* MoE: groupIndex [2, 6] gives rows 0-1 expert 0 and rows 2-5 expert 1 */
        std::vector<double> SM2 = values(2 * H, ACL_FLOAT16, 44, true, true);
        std::vector<int> EX = {0, 0, 1, 1, 1, 1};
        Dev x = make({B, R, H}, ACL_FLOAT16, X), y = make({B, R, H}, ACL_INT8, {0}), sc = make({B, R}, ACL_FLOAT, {0});
        Dev of = make({B, R}, ACL_FLOAT, {0}), sm = make({2, H}, ACL_FLOAT16, SM2), gi = make({2}, ACL_INT32, {2, 6});
        RUN(S, aclnnDynamicQuantV3, x.t, sm.t, gi.t, 2, false, "pertoken", y.t, sc.t, of.t);
        std::vector<double> WY, WS, WO;
        dq_ref(X, &SM2, B, R, H, 0, true, WY, WS, WO, &EX);
        compare("DynamicQuantV3 groupIndex: y", read(y), WY, 0);
        compare("DynamicQuantV3 groupIndex: scale", read(sc), WS, 1e-6);
        compare("DynamicQuantV3 groupIndex: offset", read(of), WO, 1e-6);
        Dev sm1 = make({H}, ACL_FLOAT16, SMH);
        expect_code("DynamicQuantV3 groupIndex with a 1-D smoothScales",
                    aclnnDynamicQuantV3GetWorkspaceSize(x.t, sm1.t, gi.t, 2, false, "pertoken", y.t, sc.t, of.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("DynamicQuantV3 groupIndex without smoothScales",
                    aclnnDynamicQuantV3GetWorkspaceSize(x.t, nullptr, gi.t, 2, false, "pertoken", y.t, sc.t, of.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *d : {&x, &y, &sc, &of, &sm, &gi, &sm1}) release(*d);
    }
    Dev x = make({B, R, H}, ACL_FLOAT16, X), y = make({B, R, H}, ACL_INT8, {0}), sc = make({B, R}, ACL_FLOAT, {0});
    Dev of = make({B, R}, ACL_FLOAT, {0}), sc1 = make({1}, ACL_FLOAT, {0}), gi = make({1}, ACL_INT32, {6});
    expect_code("DynamicQuantV3 quantMode perblock",
                aclnnDynamicQuantV3GetWorkspaceSize(x.t, nullptr, nullptr, 2, true, "perblock", y.t, sc.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV3 dstType INT32 (packed INT4)",
                aclnnDynamicQuantV3GetWorkspaceSize(x.t, nullptr, nullptr, 3, true, "pertoken", y.t, sc.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV3 offsetOut with isSymmetrical",
                aclnnDynamicQuantV3GetWorkspaceSize(x.t, nullptr, nullptr, 2, true, "pertoken", y.t, sc.t, of.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV3 pertensor scale of shape [2, 3]",
                aclnnDynamicQuantV3GetWorkspaceSize(x.t, nullptr, nullptr, 2, true, "pertensor", y.t, sc.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV3 groupIndex with pertensor",
                aclnnDynamicQuantV3GetWorkspaceSize(x.t, nullptr, gi.t, 2, true, "pertensor", y.t, sc1.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV3 null quantMode",
                aclnnDynamicQuantV3GetWorkspaceSize(x.t, nullptr, nullptr, 2, true, nullptr, y.t, sc.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("DynamicQuantV4 dstTypeMax above 32768",
                aclnnDynamicQuantV4GetWorkspaceSize(x.t, nullptr, nullptr, 2, true, "pertoken", 40000.0f, y.t, sc.t, nullptr,
                                                    &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DynamicQuantV4 null scaleOut",
                aclnnDynamicQuantV4GetWorkspaceSize(x.t, nullptr, nullptr, 2, true, "pertoken", 0.0f, y.t, nullptr, nullptr,
                                                    &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&x, &y, &sc, &of, &sc1, &gi}) release(*d);
    printf("ok dynamic quant v3\n");
}

/* An NC1HWC0-format tensor of `shape` (contiguous) holding `vals`. */
static Dev make_5hd(const Shape &shape, aclDataType dt, const std::vector<double> &vals) {
    Dev d = make(shape, dt, vals);
    aclDestroyTensor(d.t);
    Shape storage{numel(shape)};
    d.t = aclCreateTensor(shape.data(), shape.size(), dt, d.strides.data(), 0, ACL_FORMAT_NC1HWC0, storage.data(), 1, d.mem);
    return d;
}

static void relu_v3() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const Shape xs = {2, 1, 2, 3, 16}, ms = {2, 1, 2, 3, 2};
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32, ACL_INT8, ACL_UINT8}) {
        std::vector<double> X = values(numel(xs), t, 51), W(X.size()), WM(numel(ms), 0);
        for (size_t i = 0; i < X.size(); i++) {
            W[i] = X[i] > 0 ? X[i] : 0;
            if (X[i] > 0) WM[i / 16 * 2 + (i % 16) / 8] += 1 << (i % 8);
        }
        Dev x = make_5hd(xs, t, X), y = make_5hd(xs, t, {0}), m = make(ms, ACL_UINT8, {0});
        RUN(S, aclnnReluV3, x.t, y.t, m.t);
        compare("ReluV3 y", read(y), W, 0);
        compare("ReluV3 mask bits", read(m), WM, 0);
        for (Dev *d : {&x, &y, &m}) release(*d);
    }
    /* a C0 of 12 takes two mask bytes per row, the second half used */
    std::vector<double> X = values(24, ACL_FLOAT, 52), WM(4, 0);
    for (int i = 0; i < 24; i++)
        if (X[i] > 0) WM[i / 12 * 2 + (i % 12) / 8] += 1 << (i % 12 % 8);
    Dev x = make_5hd({1, 1, 1, 2, 12}, ACL_FLOAT, X), y = make_5hd({1, 1, 1, 2, 12}, ACL_FLOAT, {0});
    Dev m = make({1, 1, 1, 2, 2}, ACL_UINT8, {0});
    RUN(S, aclnnReluV3, x.t, y.t, m.t);
    compare("ReluV3 mask of a C0 of 12", read(m), WM, 0);
    Dev xnd = make({1, 1, 1, 2, 12}, ACL_FLOAT, X), mbad = make({1, 1, 1, 2, 12}, ACL_UINT8, {0});
    Dev yh = make_5hd({1, 1, 1, 2, 12}, ACL_FLOAT16, {0}), x4 = make_5hd({1, 2, 2, 6}, ACL_FLOAT, X);
    expect_code("ReluV3 ND x", aclnnReluV3GetWorkspaceSize(xnd.t, y.t, m.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReluV3 unpacked mask", aclnnReluV3GetWorkspaceSize(x.t, y.t, mbad.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReluV3 float16 yOut", aclnnReluV3GetWorkspaceSize(x.t, yh.t, m.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReluV3 4-D x", aclnnReluV3GetWorkspaceSize(x4.t, x4.t, m.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ReluV3 null maskOut", aclnnReluV3GetWorkspaceSize(x.t, y.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&x, &y, &m, &xnd, &mbad, &yh, &x4}) release(*d);
    printf("ok relu v3\n");
}

static void experimental_more() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* HardShrink: |x| <= lambd gives 0 (the boundary included) */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        std::vector<double> X = values(12, t, 61);
        X[0] = 1.5, X[1] = -1.5, X[2] = 1.25;
        std::vector<double> W(12);
        for (int i = 0; i < 12; i++) W[i] = std::fabs(X[i]) <= 1.5 ? 0 : X[i];
        Dev x = make({3, 4}, t, X, TRANSPOSED), o = make({3, 4}, t, {9});
        aclScalar *l = fs(1.5f);
        RUN(S, aclnnHardShrink, x.t, l, o.t);
        compare("HardShrink", read(o), W, 0);
        aclDestroyScalar(l);
        release(x), release(o);
    }
    {
        Dev x = make({3, 4}, ACL_FLOAT, {1}), oh = make({3, 4}, ACL_FLOAT16, {0}), xi = make({3, 4}, ACL_INT32, {1});
        aclScalar *l = fs(0.5f);
        expect_code("HardShrink float16 out", aclnnHardShrinkGetWorkspaceSize(x.t, l, oh.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("HardShrink int32 self", aclnnHardShrinkGetWorkspaceSize(xi.t, l, xi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("HardShrink null lambd", aclnnHardShrinkGetWorkspaceSize(x.t, nullptr, x.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyScalar(l);
        release(x), release(oh), release(xi);
    }
    /* Xlog1py: x [2, 3] with y [3] broadcast; x = 0 gives 0 unless y is NaN */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        std::vector<double> X = values(6, t, 62), Y = values(3, t, 63, true, true);
        X[1] = 0, X[3] = 0, Y[0] = NAN;
        std::vector<double> W(6);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) {
                double x = X[i * 3 + j], y = Y[j];
                W[i * 3 + j] = std::isnan(y) ? y : x == 0 ? 0 : as_type(static_cast<float>(x) * std::log1p(static_cast<float>(y)), t);
            }
        Dev x = make({2, 3}, t, X, STRIDED), y = make({3}, t, Y), z = make({2, 3}, t, {0});
        RUN(S, aclnnXlog1py, x.t, y.t, z.t);
        compare(t == ACL_FLOAT ? "Xlog1py float32" : "Xlog1py float16", read(z), W, t == ACL_FLOAT ? 1e-6 : 2e-3);
        release(x), release(y), release(z);
    }
    {
        Dev x = make({2, 3}, ACL_FLOAT, {1}), y = make({4}, ACL_FLOAT, {1}), yh = make({3}, ACL_FLOAT16, {1}), z = make({2, 3}, ACL_FLOAT, {0});
        expect_code("Xlog1py shapes that do not broadcast", aclnnXlog1pyGetWorkspaceSize(x.t, y.t, z.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("Xlog1py mixed dtypes", aclnnXlog1pyGetWorkspaceSize(x.t, yh.t, z.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("Xlog1py null z", aclnnXlog1pyGetWorkspaceSize(x.t, x.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        release(x), release(y), release(yh), release(z);
    }
    /* Expandv: [4, 1, 3] to [2, 4, 5, 3] (a new leading axis, the size-1 axis expanded, -1 kept) */
    for (aclDataType t : {ACL_FLOAT, ACL_INT64, ACL_BOOL}) {
        std::vector<double> X = values(12, t, 64), W;
        for (int n = 0; n < 2; n++)
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 5; b++)
                    for (int c = 0; c < 3; c++) W.push_back(X[a * 3 + c]);
        Dev x = make({4, 1, 3}, t, X, STRIDED), o = make({2, 4, 5, 3}, t, {0});
        aclIntArray *sh = ia({2, -1, 5, 3});
        RUN(S, aclnnExpandv, x.t, sh, o.t);
        compare("Expandv", read(o), W, 0);
        aclDestroyIntArray(sh);
        release(x), release(o);
    }
    {
        Dev x = make({4, 2, 3}, ACL_FLOAT, {1}), o = make({4, 5, 3}, ACL_FLOAT, {0});
        aclIntArray *sh = ia({4, 5, 3}), *sh2 = ia({5, 3});
        expect_code("Expandv axis of size 2 to 5", aclnnExpandvGetWorkspaceSize(x.t, sh, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("Expandv shorter shape", aclnnExpandvGetWorkspaceSize(x.t, sh2, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("Expandv null shape", aclnnExpandvGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyIntArray(sh), aclDestroyIntArray(sh2);
        release(x), release(o);
    }
    /* SqrtBackward: z = 0.5 dy / y, 0 where dy is 0 (even for y = 0) */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        std::vector<double> Y = values(12, t, 65, true, true), G = values(12, t, 66), W(12);
        G[0] = 0, Y[0] = 0;
        for (int i = 0; i < 12; i++) {
            float h = 0.5f * static_cast<float>(G[i]);
            W[i] = h != 0 ? as_type(h / static_cast<float>(Y[i]), t) : 0;
        }
        Dev y = make({3, 4}, t, Y, STRIDED), g = make({3, 4}, t, G, TRANSPOSED), z = make({3, 4}, t, {7});
        RUN(S, aclnnSqrtBackward, y.t, g.t, z.t);
        compare(t == ACL_FLOAT ? "SqrtBackward float32" : "SqrtBackward half types", read(z), W, t == ACL_FLOAT ? 1e-6 : 1e-2);
        release(y), release(g), release(z);
    }
    {
        Dev y = make({3, 4}, ACL_FLOAT, {1}), g = make({4}, ACL_FLOAT, {1}), zh = make({3, 4}, ACL_FLOAT16, {0});
        expect_code("SqrtBackward broadcast dy", aclnnSqrtBackwardGetWorkspaceSize(y.t, g.t, y.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("SqrtBackward float16 z", aclnnSqrtBackwardGetWorkspaceSize(y.t, y.t, zh.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
        expect_code("SqrtBackward null dy", aclnnSqrtBackwardGetWorkspaceSize(y.t, nullptr, y.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
        release(y), release(g), release(zh);
    }
    printf("ok hard shrink, xlog1py, expandv, sqrt backward\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    strided_slice();
    add_v3();
    apply_adam();
    dropout_v3();
    dynamic_quant_v3();
    relu_v3();
    experimental_more();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
