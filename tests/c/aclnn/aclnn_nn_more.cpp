/* Operators of `nn_more.rs` against host references: StridedSlice (hand-derived slices with
 * negative strides, begin/end masks, ellipsis, new and shrunk axes), AddV3 and
 * InplaceAddV3 (host scalar + alpha * tensor), ApplyAdam (in place, float32 and float16),
 * DropoutV3 / DropoutV3Grad / DropoutGenMaskV2Tensor (the bit mask agrees with
 * aclnnDropoutGenMaskV2 for the same seed and offset; the outputs are the masked, scaled
 * input). Each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR 161001 /
 * ACLNN_ERR_PARAM_INVALID 161002). Tolerances: data movement exactly; float32 arithmetic
 * to 1e-6 relative; float16 to 2e-3. */
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_strided_slice.h"
#include "aclnnop/aclnn_add_v3.h"
#include "aclnnop/aclnn_apply_adam.h"
#include "aclnnop/aclnn_dropout_v3.h"
#include "aclnnop/aclnn_dropout_v3_grad.h"
#include "aclnnop/aclnn_dropout_gen_mask.h"
#include "aclnnop/aclnn_dropout_gen_mask_v2.h"

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

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    strided_slice();
    add_v3();
    apply_adam();
    dropout_v3();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
