/* Operators of CANN's ops-math and ops-cv documentation against host references: Digamma,
 * Lgamma, Logdet, Qr, MaxN, MinN, Sum, AddN, ReduceLogSum, MaxV2, GlobalMaxPool,
 * GlobalAveragePool, Scale, Slice, SliceV2, StridedSliceAssignV2, Flatten, ChunkCat,
 * ConfusionTranspose, RoiAlign, RoiAlignV2 (+Backward), Iou, CIoU, NonMaxSuppression and Resize;
 * each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * References: std::lgamma and its central difference for digamma (1e-6 relative in float,
 * 1e-8 in double); LU elimination for logdet; Qr by its properties (Q R = A, orthonormal Q
 * columns, R upper triangular) to 1e-5; data movement exactly; RoiAlign on a linear image,
 * where bilinear sampling is exact, and its backward by the adjoint identity
 * <RoiAlign(x), g> = <x, RoiAlignBackward(g)>; IoU, NMS (the ONNX suppress-by-IoU case), CIoU
 * and Resize by hand-derived values; SignBitsPack / SignBitsUnpack by torch_npu's documented
 * 1-bit Adam example (x >= 0 sets the bit, little-endian within a byte). */
#include <algorithm>
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_digamma.h"
#include "aclnnop/aclnn_lgamma.h"
#include "aclnnop/aclnn_logdet.h"
#include "aclnnop/aclnn_qr.h"
#include "aclnnop/aclnn_maxn.h"
#include "aclnnop/aclnn_minn.h"
#include "aclnnop/aclnn_sum.h"
#include "aclnnop/aclnn_add_n.h"
#include "aclnnop/aclnn_reduce_log_sum.h"
#include "aclnnop/aclnn_max_v2.h"
#include "aclnnop/aclnn_global_max_pool.h"
#include "aclnnop/aclnn_global_average_pool.h"
#include "aclnnop/aclnn_scale.h"
#include "aclnnop/aclnn_slice.h"
#include "aclnnop/aclnn_slice_v2.h"
#include "aclnnop/aclnn_strided_slice_assign_v2.h"
#include "aclnnop/aclnn_flatten.h"
#include "aclnnop/aclnn_chunk_cat.h"
#include "aclnnop/aclnn_confusion_transpose.h"
#include "aclnnop/aclnn_roi_align.h"
#include "aclnnop/aclnn_roi_align_v2.h"
#include "aclnnop/aclnn_roi_align_v2_backward.h"
#include "aclnnop/aclnn_iou.h"
#include "aclnnop/aclnn_ciou.h"
#include "aclnnop/aclnn_non_max_suppression.h"
#include "aclnnop/aclnn_resize.h"
#include "aclnnop/aclnn_sign_bits_pack.h"
#include "aclnnop/aclnn_sign_bits_unpack.h"

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

static uint64_t g_ws;
static aclOpExecutor *g_ex;
#define WS &g_ws, &g_ex

static aclIntArray *ia(std::vector<int64_t> v) { return aclCreateIntArray(v.data(), v.size()); }
static aclFloatArray *fa(std::vector<float> v) { return aclCreateFloatArray(v.data(), v.size()); }
/* A tensor list over the tensors of `ds`, with handles of its own (the list owns and destroys
   them; the Devs keep theirs). */
static aclTensorList *tl(std::vector<const Dev *> ds) {
    std::vector<aclTensor *> v;
    for (const Dev *d : ds) {
        int64_t storage = static_cast<int64_t>(d->bytes / dsize(d->dt));
        v.push_back(aclCreateTensor(d->shape.data(), d->shape.size(), d->dt, d->strides.data(), d->offset,
                                    ACL_FORMAT_ND, &storage, 1, d->mem));
    }
    return aclCreateTensorList(v.data(), v.size());
}

/* ---- Digamma, Lgamma ---- */

static double digamma_ref(double x) {
    double h = 1e-5;
    return (std::lgamma(x + h) - std::lgamma(x - h)) / (2 * h);
}

static void gamma_family() {
    std::vector<double> X = {0.25, 0.5, 1, 1.5, 2.75, 7.5, 13, -0.5, -1.25, -2.5, 3.25, 0.125};
    for (aclDataType t : {ACL_FLOAT, ACL_DOUBLE, ACL_FLOAT16}) {
        std::vector<double> xv = as(X, t), dg, lg;
        for (double v : xv) {
            dg.push_back(as_type(digamma_ref(v), t));
            lg.push_back(as_type(std::lgamma(v), t));
        }
        double tol = t == ACL_DOUBLE ? 1e-8 : t == ACL_FLOAT ? 1e-6 : 1e-3;
        Dev x = make({3, 4}, t, xv, STRIDED), o = make({3, 4}, t, {0}), o2 = make({3, 4}, t, {0}, TRANSPOSED);
        RUN(S, aclnnDigamma, x.t, o.t);
        RUN(S, aclnnLgamma, x.t, o2.t);
        char w[64];
        snprintf(w, sizeof w, "Digamma %s", dname(t));
        compare(w, read(o), dg, tol);
        snprintf(w, sizeof w, "Lgamma %s", dname(t));
        compare(w, read(o2), lg, tol);
        release(x);
        release(o);
        release(o2);
    }
    /* poles: digamma(0) = -inf, digamma(-2) = NaN, lgamma(-2) = lgamma(0) = inf */
    Dev p = make({2}, ACL_FLOAT, {0, -2}), pd = make({2}, ACL_FLOAT, {0}), pl = make({2}, ACL_FLOAT, {0});
    RUN(S, aclnnDigamma, p.t, pd.t);
    RUN(S, aclnnLgamma, p.t, pl.t);
    compare("Digamma poles", read(pd), {-INFINITY, NAN}, 0);
    compare("Lgamma poles", read(pl), {INFINITY, INFINITY}, 0);
    Dev i = make({2}, ACL_INT32, {1, 2}), h = make({3}, ACL_FLOAT, {0});
    expect_code("Digamma self nullptr", aclnnDigammaGetWorkspaceSize(nullptr, pd.t, WS), 161001);
    expect_code("Digamma int32 self", aclnnDigammaGetWorkspaceSize(i.t, pd.t, WS), 161002);
    expect_code("Lgamma out shape", aclnnLgammaGetWorkspaceSize(p.t, h.t, WS), 161002);
    for (Dev *d : {&p, &pd, &pl, &i, &h}) release(*d);
    printf("ok gamma\n");
}

/* ---- Logdet ---- */

static double det_ref(std::vector<double> m, int n) {
    double d = 1;
    for (int c = 0; c < n; c++) {
        int p = c;
        for (int r = c + 1; r < n; r++)
            if (std::fabs(m[r * n + c]) > std::fabs(m[p * n + c])) p = r;
        if (m[p * n + c] == 0) return 0;
        if (p != c) {
            for (int k = 0; k < n; k++) std::swap(m[p * n + k], m[c * n + k]);
            d = -d;
        }
        d *= m[c * n + c];
        for (int r = c + 1; r < n; r++) {
            double f = m[r * n + c] / m[c * n + c];
            for (int k = c; k < n; k++) m[r * n + k] -= f * m[c * n + k];
        }
    }
    return d;
}

static void logdet() {
    int n = 3;
    for (aclDataType t : {ACL_DOUBLE, ACL_FLOAT}) {
        std::vector<double> A = values(4 * 9, t, 31);
        /* matrix 2 singular (two equal rows), matrix 3 diagonal positive */
        for (int k = 0; k < 3; k++) A[18 + 3 + k] = A[18 + k];
        for (int k = 0; k < 9; k++) A[27 + k] = k % 4 == 0 ? 2.0 + k : 0;
        std::vector<double> want;
        for (int b = 0; b < 4; b++) {
            double d = det_ref(std::vector<double>(A.begin() + b * 9, A.begin() + b * 9 + 9), n);
            want.push_back(d < 0 ? NAN : std::log(d));
        }
        Dev x = make({4, 3, 3}, t, A, TRANSPOSED), o = make({4}, t, {0});
        RUN(S, aclnnLogdet, x.t, o.t);
        compare(t == ACL_DOUBLE ? "Logdet double" : "Logdet float", read(o), want, t == ACL_DOUBLE ? 1e-10 : 1e-5);
        release(x);
        release(o);
    }
    Dev r = make({2, 3}, ACL_FLOAT, {1}), o = make({}, ACL_FLOAT, {0}), h = make({2, 2}, ACL_FLOAT16, {1}),
        ho = make({}, ACL_FLOAT16, {0});
    expect_code("Logdet non-square", aclnnLogdetGetWorkspaceSize(r.t, o.t, WS), 161002);
    expect_code("Logdet float16", aclnnLogdetGetWorkspaceSize(h.t, ho.t, WS), 161002);
    expect_code("Logdet out nullptr", aclnnLogdetGetWorkspaceSize(r.t, nullptr, WS), 161001);
    for (Dev *d : {&r, &o, &h, &ho}) release(*d);
    printf("ok logdet\n");
}

/* ---- Qr ---- */

static void qr() {
    for (bool some : {true, false}) {
        for (auto mn : {std::pair<int64_t, int64_t>{4, 3}, {3, 4}}) {
            int64_t m = mn.first, n = mn.second, k = std::min(m, n), c = some ? k : m;
            std::vector<double> A = values(2 * m * n, ACL_FLOAT, 41);
            Dev x = make({2, m, n}, ACL_FLOAT, A, STRIDED), q = make({2, m, c}, ACL_FLOAT, {0}),
                r = make({2, c, n}, ACL_FLOAT, {0});
            RUN(S, aclnnQr, x.t, some, q.t, r.t);
            std::vector<double> Q = read(q), R = read(r), QR, QtQ, I, low, zero;
            for (int64_t b = 0; b < 2; b++) {
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        double s = 0;
                        for (int64_t l = 0; l < c; l++) s += Q[(b * m + i) * c + l] * R[(b * c + l) * n + j];
                        QR.push_back(s);
                    }
                for (int64_t i = 0; i < c; i++)
                    for (int64_t j = 0; j < c; j++) {
                        double s = 0;
                        for (int64_t l = 0; l < m; l++) s += Q[(b * m + l) * c + i] * Q[(b * m + l) * c + j];
                        QtQ.push_back(s);
                        I.push_back(i == j ? 1 : 0);
                    }
                for (int64_t i = 0; i < c; i++)
                    for (int64_t j = 0; j < std::min(i, n); j++) low.push_back(R[(b * c + i) * n + j]);
            }
            zero.assign(low.size(), 0);
            char w[64];
            snprintf(w, sizeof w, "Qr [2, %lld, %lld] some=%d: Q R = A", (long long)m, (long long)n, some);
            compare(w, QR, A, 1e-5);
            snprintf(w, sizeof w, "Qr [2, %lld, %lld] some=%d: Q^T Q = I", (long long)m, (long long)n, some);
            compare(w, QtQ, I, 1e-5);
            snprintf(w, sizeof w, "Qr [2, %lld, %lld] some=%d: R upper", (long long)m, (long long)n, some);
            compare(w, low, zero, 1e-6);
            release(x);
            release(q);
            release(r);
        }
    }
    Dev x = make({4, 3}, ACL_FLOAT, {1}), q = make({4, 4}, ACL_FLOAT, {0}), r = make({3, 3}, ACL_FLOAT, {0}),
        v = make({4}, ACL_FLOAT, {1});
    expect_code("Qr some=true with a complete Q", aclnnQrGetWorkspaceSize(x.t, true, q.t, r.t, WS), 161002);
    expect_code("Qr 1-D self", aclnnQrGetWorkspaceSize(v.t, true, q.t, r.t, WS), 161002);
    expect_code("Qr R nullptr", aclnnQrGetWorkspaceSize(x.t, true, q.t, nullptr, WS), 161001);
    for (Dev *d : {&x, &q, &r, &v}) release(*d);
    printf("ok qr\n");
}

/* ---- MaxN, MinN, Sum, AddN ---- */

static void lists() {
    for (aclDataType t : {ACL_FLOAT, ACL_INT32, ACL_FLOAT16}) {
        std::vector<double> A = values(6, t, 51), B = values(3, t, 52), C = values(3, t, 53);
        Dev a = make({2, 3}, t, A, TRANSPOSED), b = make({3}, t, B, STRIDED), c = make({1, 3}, t, C);
        std::vector<double> mx, mn, sm;
        for (int i = 0; i < 6; i++) {
            double x = A[i], y = B[i % 3], z = C[i % 3];
            mx.push_back(std::max(x, std::max(y, z)));
            mn.push_back(std::min(x, std::min(y, z)));
            sm.push_back(as_type(x + y + z, t));
        }
        Dev o1 = make({2, 3}, t, {0}), o2 = make({2, 3}, t, {0}), o3 = make({2, 3}, t, {0});
        aclTensorList *l1 = tl({&a, &b, &c}), *l2 = tl({&a, &b, &c}), *l3 = tl({&a, &b, &c});
        RUN(S, aclnnMaxN, l1, o1.t);
        RUN(S, aclnnMinN, l2, o2.t);
        char w[64];
        snprintf(w, sizeof w, "MaxN %s", dname(t));
        compare(w, read(o1), mx, 0);
        snprintf(w, sizeof w, "MinN %s", dname(t));
        compare(w, read(o2), mn, 0);
        RUN(S, aclnnSum, l3, o3.t);
        snprintf(w, sizeof w, "Sum %s", dname(t));
        compare(w, read(o3), sm, t == ACL_FLOAT16 ? 1e-3 : 1e-6);
        aclDestroyTensorList(l1);
        aclDestroyTensorList(l2);
        aclDestroyTensorList(l3);
        for (Dev *d : {&a, &b, &c, &o1, &o2, &o3}) release(*d);
    }
    /* AddN: equal shapes, int64 and bfloat16; NaN propagates through MaxN */
    for (aclDataType t : {ACL_INT64, ACL_BF16}) {
        std::vector<double> A = values(8, t, 54), B = values(8, t, 55), want;
        for (int i = 0; i < 8; i++) want.push_back(as_type(A[i] + B[i] + A[i], t));
        Dev a = make({2, 4}, t, A), b = make({2, 4}, t, B, STRIDED), o = make({2, 4}, t, {0});
        aclTensorList *l = tl({&a, &b, &a});
        RUN(S, aclnnAddN, l, o.t);
        compare(t == ACL_INT64 ? "AddN int64" : "AddN bfloat16", read(o), want, t == ACL_BF16 ? 1e-2 : 0);
        aclDestroyTensorList(l);
        for (Dev *d : {&a, &b, &o}) release(*d);
    }
    Dev n1 = make({2}, ACL_FLOAT, {NAN, 1}), n2 = make({2}, ACL_FLOAT, {0, 2}), no = make({2}, ACL_FLOAT, {0});
    aclTensorList *nl = tl({&n1, &n2});
    RUN(S, aclnnMaxN, nl, no.t);
    compare("MaxN NaN", read(no), {NAN, 2}, 0);
    Dev i32 = make({2}, ACL_INT32, {1}), d3 = make({3}, ACL_FLOAT, {1}), o3 = make({3}, ACL_FLOAT, {0});
    aclTensorList *mixed = tl({&n1, &i32}), *shapes = tl({&n1, &d3}), *same = tl({&n1, &n2});
    expect_code("MaxN mixed dtypes", aclnnMaxNGetWorkspaceSize(mixed, no.t, WS), 161002);
    expect_code("MinN shapes that do not broadcast", aclnnMinNGetWorkspaceSize(shapes, o3.t, WS), 161002);
    expect_code("AddN unequal shapes", aclnnAddNGetWorkspaceSize(shapes, o3.t, WS), 161002);
    expect_code("Sum out shape", aclnnSumGetWorkspaceSize(same, o3.t, WS), 161002);
    expect_code("Sum tensors nullptr", aclnnSumGetWorkspaceSize(nullptr, o3.t, WS), 161001);
    for (aclTensorList *l : {nl, mixed, shapes, same}) aclDestroyTensorList(l);
    for (Dev *d : {&n1, &n2, &no, &i32, &d3, &o3}) release(*d);
    printf("ok lists\n");
}

/* ---- ReduceLogSum, MaxV2, GlobalMaxPool, GlobalAveragePool ---- */

static void reductions() {
    std::vector<double> X = values(24, ACL_FLOAT, 61, false, true);
    Dev x = make({2, 3, 4}, ACL_FLOAT, X, STRIDED);
    /* axes {-1, 0}: out[j] = log(sum_{i,k} x[i][j][k]) */
    std::vector<double> ls(3, 0), lsk;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) ls[j] += X[(i * 3 + j) * 4 + k];
    for (auto &v : ls) v = std::log(v);
    Dev o = make({3}, ACL_FLOAT, {0}), ok = make({1, 3, 1}, ACL_FLOAT, {0}), oc = make({2, 3, 4}, ACL_FLOAT, {0});
    aclIntArray *ax = ia({-1, 0}), *none = ia({});
    RUN(S, aclnnReduceLogSum, x.t, ax, false, false, o.t);
    compare("ReduceLogSum axes {-1, 0}", read(o), ls, 1e-6);
    RUN(S, aclnnReduceLogSum, x.t, ax, true, false, ok.t);
    compare("ReduceLogSum keepDims", read(ok), ls, 1e-6);
    RUN(S, aclnnReduceLogSum, x.t, none, false, true, oc.t);
    compare("ReduceLogSum noop with empty axes", read(oc), X, 0);
    aclIntArray *rep = ia({1, -2});
    expect_code("ReduceLogSum repeated axes", aclnnReduceLogSumGetWorkspaceSize(x.t, rep, false, false, o.t, WS), 161002);
    expect_code("ReduceLogSum axes nullptr", aclnnReduceLogSumGetWorkspaceSize(x.t, nullptr, false, false, o.t, WS), 161001);

    /* MaxV2 on int32 [3, 4] over dim 1, and over everything (empty dims, noop false) */
    std::vector<double> I = values(12, ACL_INT32, 62), rm(3, -1e9);
    for (int i = 0; i < 12; i++) rm[i / 4] = std::max(rm[i / 4], I[i]);
    Dev xi = make({3, 4}, ACL_INT32, I, TRANSPOSED), mo = make({3}, ACL_INT32, {0}), ma = make({}, ACL_INT32, {0});
    aclIntArray *d1 = ia({1});
    RUN(S, aclnnMaxV2, xi.t, d1, false, false, mo.t);
    compare("MaxV2 int32 dim 1", read(mo), rm, 0);
    RUN(S, aclnnMaxV2, xi.t, none, false, false, ma.t);
    compare("MaxV2 all dims", read(ma), {*std::max_element(rm.begin(), rm.end())}, 0);
    aclIntArray *d9 = ia({2});
    expect_code("MaxV2 dim out of range", aclnnMaxV2GetWorkspaceSize(xi.t, d9, false, false, mo.t, WS), 161002);

    /* global pools over [2, 3, 2, 2] */
    std::vector<double> P = values(24, ACL_FLOAT, 63), gmax(6, -1e9), gavg(6, 0);
    for (int i = 0; i < 24; i++) {
        gmax[i / 4] = std::max(gmax[i / 4], P[i]);
        gavg[i / 4] += P[i] / 4;
    }
    Dev xp = make({2, 3, 2, 2}, ACL_FLOAT, P, STRIDED), pm = make({2, 3, 1, 1}, ACL_FLOAT, {0}),
        pa = make({2, 3, 1, 1}, ACL_FLOAT, {0});
    RUN(S, aclnnGlobalMaxPool, xp.t, pm.t);
    RUN(S, aclnnGlobalAveragePool, xp.t, pa.t);
    compare("GlobalMaxPool", read(pm), gmax, 0);
    compare("GlobalAveragePool", read(pa), gavg, 1e-6);
    Dev x3 = make({2, 3, 4}, ACL_FLOAT, {1}), o3 = make({2, 3, 1}, ACL_FLOAT, {0}), bad = make({2, 3, 1, 2}, ACL_FLOAT, {0});
    expect_code("GlobalMaxPool 3-D self", aclnnGlobalMaxPoolGetWorkspaceSize(x3.t, o3.t, WS), 161002);
    expect_code("GlobalAveragePool out shape", aclnnGlobalAveragePoolGetWorkspaceSize(xp.t, bad.t, WS), 161002);
    for (aclIntArray *a : {ax, none, rep, d1, d9}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &ok, &oc, &xi, &mo, &ma, &xp, &pm, &pa, &x3, &o3, &bad}) release(*d);
    printf("ok reductions\n");
}

/* ---- Scale ---- */

static void scale() {
    std::vector<double> X = values(24, ACL_FLOAT, 71), Sc = values(12, ACL_FLOAT, 72), Bi = values(12, ACL_FLOAT, 73),
                        S3 = values(3, ACL_FLOAT, 74);
    Dev x = make({2, 3, 4}, ACL_FLOAT, X, STRIDED), s = make({3, 4}, ACL_FLOAT, Sc), b = make({3, 4}, ACL_FLOAT, Bi, TRANSPOSED),
        s3 = make({3}, ACL_FLOAT, S3), s1 = make({1}, ACL_FLOAT, {2.5}), y = make({2, 3, 4}, ACL_FLOAT, {0});
    std::vector<double> w1, w2, w3;
    for (int i = 0; i < 24; i++) {
        w1.push_back(as_type(X[i] * Sc[i % 12] + Bi[i % 12], ACL_FLOAT));
        w2.push_back(as_type(X[i] * S3[(i / 4) % 3], ACL_FLOAT));
        w3.push_back(as_type(X[i] * 2.5, ACL_FLOAT));
    }
    RUN(S, aclnnScale, x.t, s.t, b.t, 1, -1, true, y.t);
    compare("Scale from blob, axis 1 to the end, with bias", read(y), w1, 1e-6);
    RUN(S, aclnnScale, x.t, s3.t, nullptr, -2, 5, false, y.t);
    compare("Scale from input, axis -2", read(y), w2, 1e-6);
    RUN(S, aclnnScale, x.t, s1.t, nullptr, 0, 0, true, y.t);
    compare("Scale numAxes 0", read(y), w3, 1e-6);
    expect_code("Scale scale shape", aclnnScaleGetWorkspaceSize(x.t, s3.t, nullptr, 1, 2, true, y.t, WS), 161002);
    expect_code("Scale numAxes below -1", aclnnScaleGetWorkspaceSize(x.t, s.t, nullptr, 1, -2, true, y.t, WS), 161002);
    expect_code("Scale axis out of range", aclnnScaleGetWorkspaceSize(x.t, s.t, nullptr, 3, -1, true, y.t, WS), 161002);
    expect_code("Scale scale nullptr", aclnnScaleGetWorkspaceSize(x.t, nullptr, nullptr, 1, -1, true, y.t, WS), 161001);
    for (Dev *d : {&x, &s, &b, &s3, &s1, &y}) release(*d);
    printf("ok scale\n");
}

/* ---- Slice, SliceV2, StridedSliceAssignV2, Flatten, ChunkCat, ConfusionTranspose ---- */

static void conversion() {
    std::vector<double> X(24);
    for (int i = 0; i < 24; i++) X[i] = i;
    Dev x = make({4, 6}, ACL_INT64, X, TRANSPOSED);
    /* Slice dim 1, start -5 (= 1), end 100 (= 6), step 2: columns 1, 3, 5 */
    Dev o = make({4, 3}, ACL_INT64, {0});
    RUN(S, aclnnSlice, x.t, 1, -5, 100, 2, o.t);
    std::vector<double> w;
    for (int r = 0; r < 4; r++)
        for (int c : {1, 3, 5}) w.push_back(r * 6 + c);
    compare("Slice", read(o), w, 0);
    expect_code("Slice step 0", aclnnSliceGetWorkspaceSize(x.t, 1, 0, 2, 0, o.t, WS), 161002);
    expect_code("Slice dim 2", aclnnSliceGetWorkspaceSize(x.t, 2, 0, 2, 1, o.t, WS), 161002);
    /* SliceV2 axes {1, 0}: columns 4.. (end beyond) step 1, rows -3..-1 step 1 */
    Dev o2 = make({2, 2}, ACL_INT64, {0});
    aclIntArray *st = ia({-2, -3}), *en = ia({99, -1}), *ax = ia({1, 0}), *sp = ia({1, 1}), *sp3 = ia({1, 1, 1});
    RUN(S, aclnnSliceV2, x.t, st, en, ax, sp, o2.t);
    compare("SliceV2", read(o2), {10, 11, 16, 17}, 0);
    expect_code("SliceV2 lengths", aclnnSliceV2GetWorkspaceSize(x.t, st, en, ax, sp3, o2.t, WS), 161002);
    /* StridedSliceAssignV2: rows 0, 2 and columns -4..-1 of a float [4, 6] */
    Dev v = make({4, 6}, ACL_FLOAT, X), val = make({2, 3}, ACL_FLOAT, {-1, -2, -3, -4, -5, -6}, STRIDED);
    aclIntArray *b = ia({0, -4}), *e = ia({4, -1}), *s = ia({2, 1}), *s2 = ia({1, 2});
    RUN(S, aclnnStridedSliceAssignV2, v.t, val.t, b, e, s, nullptr);
    std::vector<double> wv(X);
    for (int k = 0; k < 3; k++) {
        wv[0 * 6 + 2 + k] = -1 - k;
        wv[2 * 6 + 2 + k] = -4 - k;
    }
    compare("StridedSliceAssignV2", read(v), wv, 0);
    expect_code("StridedSliceAssignV2 last-axis stride 2", aclnnStridedSliceAssignV2GetWorkspaceSize(v.t, val.t, b, e, s2, nullptr, WS), 161002);
    /* Flatten [2, 3, 4] int8 at axis 2 -> [6, 4], at axis -3 (= 0) -> [1, 24] */
    std::vector<double> F = values(24, ACL_INT8, 81);
    Dev f = make({2, 3, 4}, ACL_INT8, F, STRIDED), fo = make({6, 4}, ACL_INT8, {0}), fz = make({1, 24}, ACL_INT8, {0});
    RUN(S, aclnnFlatten, f.t, 2, fo.t);
    RUN(S, aclnnFlatten, f.t, -3, fz.t);
    compare("Flatten axis 2", read(fo), F, 0);
    compare("Flatten axis 0", read(fz), F, 0);
    expect_code("Flatten out shape", aclnnFlattenGetWorkspaceSize(f.t, 1, fo.t, WS), 161002);
    /* ChunkCat: float16 [5, 2] and [2, 3] in 3 chunks into float32 [3, 2*2 + 1*3] */
    std::vector<double> A = values(10, ACL_FLOAT16, 82), B = values(6, ACL_FLOAT16, 83);
    Dev ca = make({5, 2}, ACL_FLOAT16, A), cb = make({2, 3}, ACL_FLOAT16, B, TRANSPOSED), co = make({3, 7}, ACL_FLOAT, {9});
    aclTensorList *cl = tl({&ca, &cb});
    RUN(S, aclnnChunkCat, cl, 0, 3, co.t);
    std::vector<double> wc;
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 4; k++) wc.push_back(c * 4 + k < 10 ? A[c * 4 + k] : 0);
        for (int k = 0; k < 3; k++) wc.push_back(c < 2 ? B[c * 3 + k] : 0);
    }
    compare("ChunkCat", read(co), wc, 0);
    Dev c16 = make({3, 7}, ACL_FLOAT16, {0});
    expect_code("ChunkCat dim 1", aclnnChunkCatGetWorkspaceSize(cl, 1, 3, co.t, WS), 161002);
    /* ConfusionTranspose: reshape [4, 6] -> [2, 3, 4] then perm {2, 0, 1}; and transpose first */
    Dev ct = make({4, 6}, ACL_FLOAT, X), t1 = make({4, 2, 3}, ACL_FLOAT, {0}), t2 = make({3, 8}, ACL_FLOAT, {0});
    aclIntArray *perm = ia({2, 0, 1}), *shp = ia({2, 3, 4}), *perm2 = ia({1, 0}), *shp2 = ia({3, 8});
    RUN(S, aclnnConfusionTranspose, ct.t, perm, shp, false, t1.t);
    std::vector<double> w1, w2;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++) w1.push_back((i * 3 + j) * 4 + k);
    compare("ConfusionTranspose reshape first", read(t1), w1, 0);
    RUN(S, aclnnConfusionTranspose, ct.t, perm2, shp2, true, t2.t);
    for (int c = 0; c < 6; c++)
        for (int r = 0; r < 4; r++) w2.push_back(r * 6 + c);
    compare("ConfusionTranspose transpose first", read(t2), w2, 0);
    expect_code("ConfusionTranspose perm length", aclnnConfusionTransposeGetWorkspaceSize(ct.t, perm, shp, true, t1.t, WS), 161002);
    aclDestroyTensorList(cl);
    for (aclIntArray *a : {st, en, ax, sp, sp3, b, e, s, s2, perm, shp, perm2, shp2}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &o, &o2, &v, &val, &f, &fo, &fz, &ca, &cb, &co, &c16, &ct, &t1, &t2}) release(*d);
    printf("ok conversion\n");
}

/* ---- RoiAlign, RoiAlignV2 (+Backward) ---- */

static void roi_align() {
    /* a linear image: channel c of image n holds (n + 1) * (c + 1) * (4 y + x) on 4 x 4 */
    std::vector<double> X;
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 2; c++)
            for (int y = 0; y < 4; y++)
                for (int x = 0; x < 4; x++) X.push_back((n + 1) * (c + 1) * (4 * y + x));
    Dev x = make({2, 2, 4, 4}, ACL_FLOAT, X);
    /* box (0.5, 0.5)-(2.5, 2.5) on image 1, pooled 2 x 2, sampling 2: bin centres 1 and 2 */
    Dev boxes = make({1, 5}, ACL_FLOAT, {1, 0.5, 0.5, 2.5, 2.5}), o = make({1, 2, 2, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnRoiAlignV2, x.t, boxes.t, 2, 2, 1.0f, 2, false, o.t);
    compare("RoiAlignV2", read(o), {10, 12, 18, 20, 20, 24, 36, 40}, 1e-6);
    RUN(S, aclnnRoiAlignV2, x.t, boxes.t, 2, 2, 1.0f, 2, true, o.t);
    compare("RoiAlignV2 aligned", read(o), {5, 7, 13, 15, 10, 14, 26, 30}, 1e-6);
    /* spatialScale 0.5 on a box twice as large is the same RoI; adaptive sampling (0) */
    Dev big = make({1, 5}, ACL_FLOAT, {1, 1, 1, 5, 5});
    RUN(S, aclnnRoiAlignV2, x.t, big.t, 2, 2, 0.5f, 0, false, o.t);
    compare("RoiAlignV2 scale 0.5", read(o), {10, 12, 18, 20, 20, 24, 36, 40}, 1e-6);
    /* ONNX form: rois + batchIndices; avg as above on image 0, max takes the largest sample
       (y = x = 1.25 in bin (0, 0): 6.25) */
    Dev rois = make({1, 4}, ACL_FLOAT, {0.5, 0.5, 2.5, 2.5}), bi = make({1}, ACL_INT32, {0});
    RUN(S, aclnnRoiAlign, x.t, rois.t, bi.t, "avg", 2, 2, 2, 1.0f, o.t);
    compare("RoiAlign avg", read(o), {5, 6, 9, 10, 10, 12, 18, 20}, 1e-6);
    RUN(S, aclnnRoiAlign, x.t, rois.t, bi.t, "max", 2, 2, 2, 1.0f, o.t);
    compare("RoiAlign max", read(o), {6.25, 7.25, 10.25, 11.25, 12.5, 14.5, 20.5, 22.5}, 1e-6);
    /* backward: <RoiAlignV2(x), g> = <x, RoiAlignV2Backward(g)> for boxes partly outside */
    std::vector<double> R = values(2 * 2 * 5 * 6, ACL_FLOAT, 91), G = values(3 * 2 * 2 * 3, ACL_FLOAT, 92);
    Dev rx = make({2, 2, 5, 6}, ACL_FLOAT, R), rb = make({3, 5}, ACL_FLOAT, {0, -1, 0.5, 3.5, 4, 1, 1, 1, 5.5, 3.25, 1.7, 2, -0.5, 6.5, 5.5}),
        ro = make({3, 2, 2, 3}, ACL_FLOAT, {0}), g = make({3, 2, 2, 3}, ACL_FLOAT, G, STRIDED), gi = make({2, 2, 5, 6}, ACL_FLOAT, {7});
    aclIntArray *shape = ia({2, 2, 5, 6});
    for (bool aligned : {false, true}) {
        RUN(S, aclnnRoiAlignV2, rx.t, rb.t, 2, 3, 1.0f, 0, aligned, ro.t);
        RUN(S, aclnnRoiAlignV2Backward, g.t, rb.t, shape, 2, 3, 1.0f, 0, aligned, gi.t);
        std::vector<double> y = read(ro), dx = read(gi);
        double lhs = 0, rhs = 0;
        for (size_t i = 0; i < y.size(); i++) lhs += y[i] * G[i];
        for (size_t i = 0; i < dx.size(); i++) rhs += dx[i] * R[i];
        compare(aligned ? "RoiAlignV2Backward adjoint, aligned" : "RoiAlignV2Backward adjoint", {lhs}, {rhs}, 1e-5);
    }
    Dev b4 = make({1, 4}, ACL_FLOAT, {0}), i64 = make({1}, ACL_INT64, {0});
    expect_code("RoiAlignV2 boxes (1, 4)", aclnnRoiAlignV2GetWorkspaceSize(x.t, b4.t, 2, 2, 1.0f, 2, false, o.t, WS), 161002);
    expect_code("RoiAlignV2 spatialScale 0", aclnnRoiAlignV2GetWorkspaceSize(x.t, boxes.t, 2, 2, 0.0f, 2, false, o.t, WS), 161002);
    expect_code("RoiAlign mode", aclnnRoiAlignGetWorkspaceSize(x.t, rois.t, bi.t, "sum", 2, 2, 2, 1.0f, o.t, WS), 161002);
    expect_code("RoiAlign int64 batchIndices", aclnnRoiAlignGetWorkspaceSize(x.t, rois.t, i64.t, "avg", 2, 2, 2, 1.0f, o.t, WS), 161002);
    expect_code("RoiAlign mode nullptr", aclnnRoiAlignGetWorkspaceSize(x.t, rois.t, bi.t, nullptr, 2, 2, 2, 1.0f, o.t, WS), 161001);
    expect_code("RoiAlignV2Backward inputShape nullptr", aclnnRoiAlignV2BackwardGetWorkspaceSize(g.t, rb.t, nullptr, 2, 3, 1.0f, 0, false, gi.t, WS), 161001);
    aclDestroyIntArray(shape);
    for (Dev *d : {&x, &boxes, &o, &big, &rois, &bi, &rx, &rb, &ro, &g, &gi, &b4, &i64}) release(*d);
    printf("ok roi align\n");
}

/* ---- Iou, CIoU, NonMaxSuppression, Resize ---- */

static void boxes() {
    /* [0,0,2,2] and [1,1,3,3]: intersection 1, areas 4: IoU 1/7, IoF 1/4 */
    Dev b = make({2, 4}, ACL_FLOAT, {0, 0, 2, 2, 0, 0, 1, 1}), g = make({3, 4}, ACL_FLOAT, {1, 1, 3, 3, 0, 0, 2, 2, 5, 5, 6, 6}, STRIDED),
        o = make({2, 3}, ACL_FLOAT, {9}), oa = make({2, 1}, ACL_FLOAT, {9}), g2 = make({2, 4}, ACL_FLOAT, {1, 1, 3, 3, 0, 0, 2, 2});
    RUN(S, aclnnIou, b.t, g.t, "iou", 0.0f, false, o.t);
    compare("Iou", read(o), {1.0 / 7, 1, 0, 0, 0.25, 0}, 1e-6);
    RUN(S, aclnnIou, b.t, g.t, "iof", 0.0f, false, o.t);
    compare("Iof", read(o), {0.25, 1, 0, 0, 0.25, 0}, 1e-6);
    /* eps 1 adds 1 to every side: [0,0,2,2] vs [1,1,3,3] gives 4 / (9 + 9 - 4) */
    RUN(S, aclnnIou, b.t, g2.t, "iou", 1.0f, true, oa.t);
    compare("Iou aligned, eps 1", read(oa), {4.0 / 14, 4.0 / 9}, 1e-6);
    expect_code("Iou mode", aclnnIouGetWorkspaceSize(b.t, g.t, "giou", 0.0f, false, o.t, WS), 161002);
    expect_code("Iou eps < 0", aclnnIouGetWorkspaceSize(b.t, g.t, "iou", -1.0f, false, o.t, WS), 161002);
    expect_code("Iou aligned rows", aclnnIouGetWorkspaceSize(b.t, g.t, "iou", 0.0f, true, oa.t, WS), 161002);

    /* CIoU over 1024 boxes (x0, y0, x1, y1), [4, 1024]: box 0 is [0,0,2,2] vs [1,1,3,3]
       (same aspect: IoU 1/7 - rho^2/c^2 = 2/18), box 1 [0,0,2,1] vs [0,0,1,2], the rest equal */
    int n = 1024;
    std::vector<double> P(4 * n), Q(4 * n);
    for (int i = 0; i < n; i++) {
        double w = 1 + i % 3, h = 1 + i % 5, p[4] = {0, 0, w, h}, q[4] = {0, 0, w, h};
        if (i == 0) {
            double a[4] = {0, 0, 2, 2}, c[4] = {1, 1, 3, 3};
            std::copy(a, a + 4, p), std::copy(c, c + 4, q);
        } else if (i == 1) {
            double a[4] = {0, 0, 2, 1}, c[4] = {0, 0, 1, 2};
            std::copy(a, a + 4, p), std::copy(c, c + 4, q);
        }
        for (int k = 0; k < 4; k++) P[k * n + i] = p[k], Q[k * n + i] = q[k];
    }
    Dev pb = make({4, n}, ACL_FLOAT, P), qb = make({4, n}, ACL_FLOAT, Q), co = make({1, n}, ACL_FLOAT, {0}), ca = make({1, n}, ACL_FLOAT, {0});
    RUN(S, aclnnCIoU, pb.t, qb.t, false, false, "iou", co.t, ca.t);
    double d1 = std::atan(0.5) - std::atan(2.0), v1 = 4 / (M_PI * M_PI) * d1 * d1, i1 = 1.0 / 3;
    double c1 = i1 - 0.5 / 8 - v1 / (1 - i1 + v1) * v1;
    std::vector<double> cw(n, 1), aw(n, 0);
    cw[0] = 1.0 / 7 - 2.0 / 18;
    cw[1] = c1;
    aw[1] = d1;
    compare("CIoU overlap", read(co), cw, 1e-5);
    compare("CIoU atanSub", read(ca), aw, 1e-5);
    Dev small = make({4, 8}, ACL_FLOAT, {1}), so = make({1, 8}, ACL_FLOAT, {0});
    expect_code("CIoU n not a multiple of 1024", aclnnCIoUGetWorkspaceSize(small.t, small.t, false, false, "iou", so.t, so.t, WS), 161002);
    expect_code("CIoU isCross", aclnnCIoUGetWorkspaceSize(pb.t, qb.t, false, true, "iou", co.t, ca.t, WS), 161002);

    /* NMS: ONNX's suppress-by-IoU case (centerPointBox 0, (y1, x1, y2, x2)): boxes 3, 0, 5 */
    Dev nb = make({1, 6, 4}, ACL_FLOAT, {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101}),
        ns = make({1, 1, 6}, ACL_FLOAT, {0.9, 0.75, 0.6, 0.95, 0.5, 0.3}), no = make({3, 3}, ACL_INT32, {7}),
        no4 = make({4, 3}, ACL_INT32, {7});
    aclIntArray *mx = ia({3}), *mx9 = ia({701});
    aclFloatArray *iou = fa({0.5f}), *sc0 = fa({0.0f}), *sc4 = fa({0.4f}), *bad = fa({1.5f});
    RUN(S, aclnnNonMaxSuppression, nb.t, ns.t, mx, iou, sc0, 0, no.t);
    compare("NonMaxSuppression", read(no), {0, 0, 3, 0, 0, 0, 0, 0, 5}, 0);
    /* score threshold 0.4 drops box 5: its row and the spare one are -1 */
    RUN(S, aclnnNonMaxSuppression, nb.t, ns.t, mx, iou, sc4, 0, no4.t);
    compare("NonMaxSuppression score threshold", read(no4), {0, 0, 3, 0, 0, 0, -1, -1, -1, -1, -1, -1}, 0);
    expect_code("NonMaxSuppression max 701", aclnnNonMaxSuppressionGetWorkspaceSize(nb.t, ns.t, mx9, iou, sc0, 0, no.t, WS), 161002);
    expect_code("NonMaxSuppression iou 1.5", aclnnNonMaxSuppressionGetWorkspaceSize(nb.t, ns.t, mx, bad, sc0, 0, no.t, WS), 161002);
    expect_code("NonMaxSuppression centerPointBox 2", aclnnNonMaxSuppressionGetWorkspaceSize(nb.t, ns.t, mx, iou, sc0, 2, no.t, WS), 161002);

    /* Resize [1, 1, 2, 3] by (2, 2): nearest repeats, bilinear reads d / 2 (clamped) */
    Dev rx = make({1, 1, 2, 3}, ACL_FLOAT, {1, 2, 3, 4, 5, 6}), rn = make({1, 1, 4, 6}, ACL_FLOAT, {0}), rl = make({1, 1, 4, 6}, ACL_FLOAT, {0});
    aclFloatArray *s2 = fa({1, 1, 2, 2}), *sn = fa({2, 1, 2, 2});
    RUN(S, aclnnResize, rx.t, s2, "nearest", rn.t);
    RUN(S, aclnnResize, rx.t, s2, "bilinear", rl.t);
    std::vector<double> wn, wl;
    double row[2][6] = {{1, 1.5, 2, 2.5, 3, 3}, {4, 4.5, 5, 5.5, 6, 6}};
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 6; x++) {
            wn.push_back((y / 2) * 3 + x / 2 + 1);
            double fy = y / 2.0;
            int y0 = static_cast<int>(fy), y1 = std::min(y0 + 1, 1);
            wl.push_back(row[y0][x] * (1 - (fy - y0)) + row[y1][x] * (fy - y0));
        }
    compare("Resize nearest", read(rn), wn, 0);
    compare("Resize bilinear", read(rl), wl, 1e-6);
    expect_code("Resize mode", aclnnResizeGetWorkspaceSize(rx.t, s2, "bicubic", rn.t, WS), 161002);
    expect_code("Resize N scale", aclnnResizeGetWorkspaceSize(rx.t, sn, "nearest", rn.t, WS), 161002);
    expect_code("Resize scales nullptr", aclnnResizeGetWorkspaceSize(rx.t, nullptr, "nearest", rn.t, WS), 161001);
    aclDestroyIntArray(mx);
    aclDestroyIntArray(mx9);
    for (aclFloatArray *f : {iou, sc0, sc4, bad, s2, sn}) aclDestroyFloatArray(f);
    for (Dev *d : {&b, &g, &o, &oa, &g2, &pb, &qb, &co, &ca, &small, &so, &nb, &ns, &no, &no4, &rx, &rn, &rl}) release(*d);
    printf("ok boxes\n");
}

/* ---- SignBitsPack, SignBitsUnpack ---- */

static void sign_bits() {
    std::vector<double> X = {5, 4, 3, 2, 0, -1, -2, 4, 3, 2, 1, 0, -1, -2};
    for (aclDataType t : {ACL_FLOAT16, ACL_FLOAT}) {
        Dev x = make({14}, t, X, STRIDED), o = make({2, 1}, ACL_UINT8, {7});
        RUN(S, aclnnSignBitsPack, x.t, 2, o.t);
        compare(t == ACL_FLOAT ? "SignBitsPack float" : "SignBitsPack float16", read(o), {159, 15}, 0);
        release(x);
        release(o);
    }
    Dev p = make({2}, ACL_UINT8, {159, 15}), u = make({1, 16}, ACL_FLOAT16, {0}), u2 = make({2, 8}, ACL_FLOAT, {0});
    RUN(S, aclnnSignBitsUnpack, p.t, 1, ACL_FLOAT16, u.t);
    std::vector<double> w = {1, 1, 1, 1, 1, -1, -1, 1, 1, 1, 1, 1, -1, -1, -1, -1};
    compare("SignBitsUnpack float16", read(u), w, 0);
    RUN(S, aclnnSignBitsUnpack, p.t, 2, ACL_FLOAT, u2.t);
    compare("SignBitsUnpack float", read(u2), w, 0);
    Dev x = make({14}, ACL_FLOAT, X), o3 = make({3, 1}, ACL_UINT8, {0});
    expect_code("SignBitsPack size 3", aclnnSignBitsPackGetWorkspaceSize(x.t, 3, o3.t, WS), 161002);
    expect_code("SignBitsUnpack dtype", aclnnSignBitsUnpackGetWorkspaceSize(p.t, 1, ACL_FLOAT, u.t, WS), 161002);
    expect_code("SignBitsPack out nullptr", aclnnSignBitsPackGetWorkspaceSize(x.t, 2, nullptr, WS), 161001);
    for (Dev *d : {&p, &u, &u2, &x, &o3}) release(*d);
    printf("ok sign bits\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    gamma_family();
    logdet();
    qr();
    lists();
    reductions();
    scale();
    conversion();
    roi_align();
    boxes();
    sign_bits();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
