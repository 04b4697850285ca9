/* More operators of the aclnn reference, against float64 host references: IndexFillTensor /
 * InplaceIndexFillTensor, IndexFill / InplaceIndexFill (indices in a tensor), Renorm / InplaceRenorm, Range, Pdist, Slogdet, LinalgQr; each with
 * documented argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: data movement, integer results and Range exactly; float32 values to 1e-6
 * relative (computed in float64 and rounded once), float16 to 1e-3; Slogdet to 1e-6
 * (float32) and 1e-12 (double); LinalgQr by its properties (Q R = A, Q's columns
 * orthonormal, R upper triangular) to 1e-5 (float32) and 1e-12 (double), 1e-2 (float16).
 * Inputs include transposed and strided views. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_index_fill_tensor.h"
#include "aclnnop/aclnn_index_fill.h"
#include "aclnnop/aclnn_renorm.h"
#include "aclnnop/aclnn_range.h"
#include "aclnnop/aclnn_pdist.h"
#include "aclnnop/aclnn_slogdet.h"
#include "aclnnop/aclnn_linalg_qr.h"

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

static aclIntArray *ia(std::vector<int64_t> v) { return aclCreateIntArray(v.data(), v.size()); }
static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }
static aclScalar *ds(double v) { return aclCreateScalar(&v, ACL_DOUBLE); }
static aclScalar *ls(int64_t v) { return aclCreateScalar(&v, ACL_INT64); }

static void index_fill() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* transposed float [3, 4], dim 1, index {0, -1} (the last column), value 2.5 */
    std::vector<double> X = values(12, ACL_FLOAT, 1);
    Dev x = make({3, 4}, ACL_FLOAT, X, TRANSPOSED), o = make({3, 4}, ACL_FLOAT, {0});
    aclIntArray *idx = ia({0, -1});
    aclScalar *v = fs(2.5f);
    RUN(S, aclnnIndexFillTensor, x.t, 1, idx, v, o.t);
    std::vector<double> want(X);
    for (int r = 0; r < 3; r++) want[r * 4 + 0] = want[r * 4 + 3] = 2.5;
    compare("IndexFillTensor transposed float [3, 4], dim 1, index {0, -1}", read(o), want, 0);
    /* in place on a strided int32 [4, 3], dim 0, index {2}, value -7 */
    std::vector<double> Y = values(12, ACL_INT32, 2);
    Dev y = make({4, 3}, ACL_INT32, Y, STRIDED);
    aclIntArray *i2 = ia({2});
    aclScalar *m7 = ls(-7);
    RUN(S, aclnnInplaceIndexFillTensor, y.t, 0, i2, m7);
    std::vector<double> wy(Y);
    for (int c = 0; c < 3; c++) wy[2 * 3 + c] = -7;
    compare("InplaceIndexFillTensor strided int32 [4, 3], dim 0, index {2}", read(y), wy, 0);
    /* errors */
    aclIntArray *far = ia({4});
    Dev oi = make({3, 4}, ACL_INT32, {0});
    expect_code("IndexFillTensor null self", aclnnIndexFillTensorGetWorkspaceSize(nullptr, 1, idx, v, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IndexFillTensor null index", aclnnIndexFillTensorGetWorkspaceSize(x.t, 1, nullptr, v, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IndexFillTensor index 4 of a dimension of 4",
                aclnnIndexFillTensorGetWorkspaceSize(x.t, 1, far, v, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexFillTensor int32 out of a float self",
                aclnnIndexFillTensorGetWorkspaceSize(x.t, 1, idx, v, oi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceIndexFillTensor dim 2 of a 2-D self",
                aclnnInplaceIndexFillTensorGetWorkspaceSize(y.t, 2, i2, m7, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* IndexFill: indices in an int64 tensor {-1, 7, 1}; 7 is out of range and skipped */
    Dev it = make({3}, ACL_INT64, {-1, 7, 1}), o2 = make({3, 4}, ACL_FLOAT, {0});
    RUN(S, aclnnIndexFill, x.t, 1, it.t, v, o2.t);
    std::vector<double> w2(X);
    for (int r = 0; r < 3; r++) w2[r * 4 + 3] = w2[r * 4 + 1] = 2.5;
    compare("IndexFill transposed float [3, 4], dim 1, index tensor {-1, 7, 1} (7 skipped)", read(o2), w2, 0);
    /* InplaceIndexFill on float16 [2, 3, 2], dim -2, int32 0-d index 0 */
    std::vector<double> Z = values(12, ACL_FLOAT16, 3);
    Dev z = make({2, 3, 2}, ACL_FLOAT16, Z), i0 = make({}, ACL_INT32, {0});
    RUN(S, aclnnInplaceIndexFill, z.t, -2, i0.t, v);
    std::vector<double> wz(Z);
    for (int b = 0; b < 2; b++)
        for (int c = 0; c < 2; c++) wz[b * 6 + c] = 2.5;
    compare("InplaceIndexFill float16 [2, 3, 2], dim -2, 0-d int32 index 0", read(z), wz, 0);
    Dev ifl = make({2}, ACL_FLOAT, {0}), i2d = make({1, 2}, ACL_INT64, {0});
    expect_code("IndexFill null index", aclnnIndexFillGetWorkspaceSize(x.t, 1, nullptr, v, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IndexFill null value", aclnnIndexFillGetWorkspaceSize(x.t, 1, it.t, nullptr, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IndexFill float index", aclnnIndexFillGetWorkspaceSize(x.t, 1, ifl.t, v, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexFill 2-D index", aclnnIndexFillGetWorkspaceSize(x.t, 1, i2d.t, v, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceIndexFill dim 3 of a 3-D self", aclnnInplaceIndexFillGetWorkspaceSize(z.t, 3, i0.t, v, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(idx);
    aclDestroyIntArray(i2);
    aclDestroyIntArray(far);
    aclDestroyScalar(v);
    aclDestroyScalar(m7);
    for (Dev *d : {&x, &o, &y, &oi, &it, &o2, &z, &i0, &ifl, &i2d}) release(*d);
    printf("ok index fill\n");
}

/* renorm of dense row-major x with shape sh along dim */
static std::vector<double> renorm_ref(const std::vector<double> &x, const Shape &sh, int dim, double p, double maxnorm) {
    std::vector<double> y(x);
    int64_t n = sh[dim], inner = 1;
    for (size_t k = dim + 1; k < sh.size(); k++) inner *= sh[k];
    int64_t outer = static_cast<int64_t>(x.size()) / (n * inner);
    for (int64_t j = 0; j < n; j++) {
        double s = 0, mx = 0;
        for (int64_t o = 0; o < outer; o++)
            for (int64_t i = 0; i < inner; i++) {
                double e = std::fabs(x[(o * n + j) * inner + i]);
                s += std::pow(e, p);
                mx = std::max(mx, e);
            }
        double norm = std::isinf(p) ? mx : std::pow(s, 1 / p);
        if (norm > maxnorm)
            for (int64_t o = 0; o < outer; o++)
                for (int64_t i = 0; i < inner; i++) y[(o * n + j) * inner + i] *= maxnorm / (norm + 1e-7);
    }
    return y;
}

static void renorm() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* the reference's example: rows 1, 2, 3 of [3, 3], p 1, dim 0, maxNorm 5 */
    Dev e = make({3, 3}, ACL_FLOAT, {1, 1, 1, 2, 2, 2, 3, 3, 3}), eo = make({3, 3}, ACL_FLOAT, {0});
    aclScalar *p1 = fs(1), *m5 = fs(5);
    RUN(S, aclnnRenorm, e.t, p1, 0, m5, eo.t);
    compare("Renorm the reference's example (p 1, dim 0, maxNorm 5)", read(eo),
            as(renorm_ref({1, 1, 1, 2, 2, 2, 3, 3, 3}, {3, 3}, 0, 1, 5), ACL_FLOAT), 1e-6);
    /* p 2 along dim 1 of a transposed [2, 3, 4] float and float16; p 3 along dim -1 in place */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        std::vector<double> X = values(24, t, 3);
        Dev x = make({2, 3, 4}, t, X, TRANSPOSED), o = make({2, 3, 4}, t, {0});
        aclScalar *p2 = fs(2), *mn = fs(3);
        RUN(S, aclnnRenorm, x.t, p2, 1, mn, o.t);
        char what[96];
        snprintf(what, sizeof what, "Renorm %s transposed [2, 3, 4], p 2, dim 1, maxNorm 3", dname(t));
        std::vector<double> want = renorm_ref(X, {2, 3, 4}, 1, 2, 3);
        compare(what, read(o), as(want, t), t == ACL_FLOAT ? 1e-6 : 1e-3);
        aclDestroyScalar(p2);
        aclDestroyScalar(mn);
        release(x);
        release(o);
    }
    std::vector<double> Y = values(12, ACL_FLOAT, 4);
    Dev y = make({3, 4}, ACL_FLOAT, Y, STRIDED);
    aclScalar *p3 = fs(3), *m2 = fs(2), *pinf = fs(INFINITY);
    RUN(S, aclnnInplaceRenorm, y.t, p3, -1, m2);
    std::vector<double> wy = renorm_ref(Y, {3, 4}, 1, 3, 2);
    compare("InplaceRenorm strided [3, 4], p 3, dim -1, maxNorm 2", read(y), as(wy, ACL_FLOAT), 1e-6);
    RUN(S, aclnnInplaceRenorm, y.t, pinf, 0, m2);
    compare("InplaceRenorm p inf, dim 0", read(y), as(renorm_ref(as(wy, ACL_FLOAT), {3, 4}, 0, INFINITY, 2), ACL_FLOAT),
            1e-6);
    /* errors */
    Dev xi = make({3, 3}, ACL_INT32, {1}), oh = make({3, 3}, ACL_FLOAT16, {0});
    aclScalar *pneg = fs(-1), *mneg = fs(-1);
    expect_code("Renorm null self", aclnnRenormGetWorkspaceSize(nullptr, p1, 0, m5, eo.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Renorm null maxNorm", aclnnRenormGetWorkspaceSize(e.t, p1, 0, nullptr, eo.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Renorm int32 self", aclnnRenormGetWorkspaceSize(xi.t, p1, 0, m5, xi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Renorm float16 out of a float self", aclnnRenormGetWorkspaceSize(e.t, p1, 0, m5, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Renorm p -1", aclnnRenormGetWorkspaceSize(e.t, pneg, 0, m5, eo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Renorm maxNorm -1", aclnnRenormGetWorkspaceSize(e.t, p1, 0, mneg, eo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceRenorm dim 2 of a 2-D self", aclnnInplaceRenormGetWorkspaceSize(e.t, p1, 2, m5, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclScalar *s : {p1, m5, p3, m2, pinf, pneg, mneg}) aclDestroyScalar(s);
    for (Dev *d : {&e, &eo, &y, &xi, &oh}) release(*d);
    printf("ok renorm\n");
}

static void range() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* range(0, 5, 0.5): 11 values, the end included */
    aclScalar *z = fs(0), *five = fs(5), *half = fs(0.5f);
    Dev o = make({11}, ACL_FLOAT, {0});
    RUN(S, aclnnRange, z, five, half, o.t);
    std::vector<double> want;
    for (int i = 0; i <= 10; i++) want.push_back(i * 0.5);
    compare("Range float (0, 5, 0.5)", read(o), want, 0);
    /* int64 range(10, -3, -4) = 10, 6, 2, -2; double range(1, 2, 0.3) = 1, 1.3, 1.6, 1.9 */
    aclScalar *ten = ls(10), *m3 = ls(-3), *m4 = ls(-4);
    Dev oi = make({4}, ACL_INT64, {0});
    RUN(S, aclnnRange, ten, m3, m4, oi.t);
    compare("Range int64 (10, -3, -4)", read(oi), {10, 6, 2, -2}, 0);
    aclScalar *d1 = ds(1), *d2 = ds(2), *d03 = ds(0.3);
    Dev od = make({4}, ACL_DOUBLE, {0}, STRIDED);
    RUN(S, aclnnRange, d1, d2, d03, od.t);
    compare("Range double (1, 2, 0.3) into a strided out", read(od), {1, 1 + 0.3, 1 + 2 * 0.3, 1 + 3 * 0.3}, 0);
    /* errors */
    Dev o10 = make({10}, ACL_FLOAT, {0}), ob = make({11}, ACL_BOOL, {0});
    aclScalar *zero = fs(0);
    expect_code("Range null step", aclnnRangeGetWorkspaceSize(z, five, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Range null out", aclnnRangeGetWorkspaceSize(z, five, half, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Range out of 10 elements for 11 values", aclnnRangeGetWorkspaceSize(z, five, half, o10.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Range step 0", aclnnRangeGetWorkspaceSize(z, five, zero, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Range negative step towards a larger end", aclnnRangeGetWorkspaceSize(z, five, m4, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Range bool out", aclnnRangeGetWorkspaceSize(z, five, half, ob.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (aclScalar *s : {z, five, half, ten, m3, m4, d1, d2, d03, zero}) aclDestroyScalar(s);
    for (Dev *d : {&o, &oi, &od, &o10, &ob}) release(*d);
    printf("ok range\n");
}

static std::vector<double> pdist_ref(const std::vector<double> &x, int n, int m, double p) {
    std::vector<double> r;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double s = 0, mx = 0, nz = 0;
            for (int k = 0; k < m; k++) {
                double d = std::fabs(x[i * m + k] - x[j * m + k]);
                s += std::pow(d, p);
                mx = std::max(mx, d);
                nz += d != 0;
            }
            r.push_back(std::isinf(p) ? mx : p == 0 ? nz : std::pow(s, 1 / p));
        }
    return r;
}

static void pdist() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16})
        for (float p : {2.0f, 1.0f, 0.5f, 0.0f, static_cast<float>(INFINITY)}) {
            std::vector<double> X = values(20, t, 5);
            X[3] = X[8]; /* rows 0 and 1 share an element (p 0 counts differences) */
            Dev x = make({5, 4}, t, X, TRANSPOSED), o = make({10}, t, {0});
            RUN(S, aclnnPdist, x.t, p, o.t);
            char what[96];
            snprintf(what, sizeof what, "Pdist %s transposed [5, 4], p %g", dname(t), p);
            compare(what, read(o), as(pdist_ref(X, 5, 4, p), t), t == ACL_FLOAT ? 1e-6 : 1e-3);
            release(x);
            release(o);
        }
    /* one row: no pairs */
    Dev x1 = make({1, 3}, ACL_FLOAT, {1, 2, 3}), o0 = make({0}, ACL_FLOAT, {0});
    RUN(S, aclnnPdist, x1.t, 2.0f, o0.t);
    g_checks++;
    /* errors */
    Dev x = make({4, 3}, ACL_FLOAT, {1}), o6 = make({6}, ACL_FLOAT, {0}), o5 = make({5}, ACL_FLOAT, {0});
    Dev o6h = make({6}, ACL_FLOAT16, {0}), x3 = make({2, 2, 3}, ACL_FLOAT, {1}), xd = make({4, 3}, ACL_DOUBLE, {1});
    expect_code("Pdist null self", aclnnPdistGetWorkspaceSize(nullptr, 2.0f, o6.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Pdist null out", aclnnPdistGetWorkspaceSize(x.t, 2.0f, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Pdist out of 5 elements for 4 rows", aclnnPdistGetWorkspaceSize(x.t, 2.0f, o5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Pdist float16 out of a float self", aclnnPdistGetWorkspaceSize(x.t, 2.0f, o6h.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Pdist 3-D self", aclnnPdistGetWorkspaceSize(x3.t, 2.0f, o6.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Pdist double self", aclnnPdistGetWorkspaceSize(xd.t, 2.0f, o6.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Pdist p -1", aclnnPdistGetWorkspaceSize(x.t, -1.0f, o6.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x1, &o0, &x, &o6, &o5, &o6h, &x3, &xd}) release(*d);
    printf("ok pdist\n");
}

/* sign and log|det| of dense row-major n x n matrices (cofactor-free: elimination with
 * full pivot search, independent of the library's row pivoting) */
static void slogdet_ref(std::vector<double> m, int n, double *sign, double *logabs) {
    double s = 1, l = 0;
    for (int c = 0; c < n; c++) {
        int pr = c, pc = c;
        for (int r = c; r < n; r++)
            for (int k = c; k < n; k++)
                if (std::fabs(m[r * n + k]) > std::fabs(m[pr * n + pc])) pr = r, pc = k;
        double pv = m[pr * n + pc];
        if (pv == 0) {
            *sign = 0;
            *logabs = -INFINITY;
            return;
        }
        if (pr != c) {
            for (int k = 0; k < n; k++) std::swap(m[pr * n + k], m[c * n + k]);
            s = -s;
        }
        if (pc != c) {
            for (int r = 0; r < n; r++) std::swap(m[r * n + pc], m[r * n + c]);
            s = -s;
        }
        if (pv < 0) s = -s;
        l += std::log(std::fabs(pv));
        for (int r = c + 1; r < n; r++) {
            double f = m[r * n + c] / pv;
            for (int k = c; k < n; k++) m[r * n + k] -= f * m[c * n + k];
        }
    }
    *sign = s;
    *logabs = l;
}

static void slogdet() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* a batch [2, 3] of 4 x 4 matrices, float (transposed) and double; matrix 4 singular */
    for (aclDataType t : {ACL_FLOAT, ACL_DOUBLE}) {
        std::vector<double> X = values(96, t, 6);
        for (int k = 0; k < 4; k++) X[4 * 16 + 2 * 4 + k] = X[4 * 16 + 1 * 4 + k]; /* two equal rows */
        Dev x = make({2, 3, 4, 4}, t, X, t == ACL_FLOAT ? TRANSPOSED : STRIDED);
        Dev s = make({2, 3}, t, {0}), l = make({2, 3}, t, {0}, STRIDED);
        RUN(S, aclnnSlogdet, x.t, s.t, l.t);
        std::vector<double> ws_(6), wl(6);
        for (int b = 0; b < 6; b++)
            slogdet_ref({X.begin() + b * 16, X.begin() + (b + 1) * 16}, 4, &ws_[b], &wl[b]);
        char what[96];
        snprintf(what, sizeof what, "Slogdet %s [2, 3, 4, 4] sign (matrix 4 singular)", dname(t));
        compare(what, read(s), ws_, 0);
        snprintf(what, sizeof what, "Slogdet %s [2, 3, 4, 4] log|det|", dname(t));
        compare(what, read(l), as(wl, t), t == ACL_FLOAT ? 1e-6 : 1e-12);
        release(x);
        release(s);
        release(l);
    }
    /* one 2 x 2 matrix, 0-d outputs: det [[0, 2], [3, 1]] = -6 */
    Dev m = make({2, 2}, ACL_FLOAT, {0, 2, 3, 1}), s0 = make({}, ACL_FLOAT, {0}), l0 = make({}, ACL_FLOAT, {0});
    RUN(S, aclnnSlogdet, m.t, s0.t, l0.t);
    compare("Slogdet [[0, 2], [3, 1]] sign", read(s0), {-1}, 0);
    compare("Slogdet [[0, 2], [3, 1]] log|det|", read(l0), {as_type(std::log(6.0), ACL_FLOAT)}, 1e-6);
    /* errors */
    Dev r = make({2, 3}, ACL_FLOAT, {1}), h = make({2, 2}, ACL_FLOAT16, {1}), s2 = make({2}, ACL_FLOAT, {0});
    Dev si = make({}, ACL_INT32, {0});
    expect_code("Slogdet null self", aclnnSlogdetGetWorkspaceSize(nullptr, s0.t, l0.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Slogdet null logOut", aclnnSlogdetGetWorkspaceSize(m.t, s0.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Slogdet non-square self", aclnnSlogdetGetWorkspaceSize(r.t, s0.t, l0.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Slogdet float16 self", aclnnSlogdetGetWorkspaceSize(h.t, s0.t, l0.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Slogdet signOut of shape [2] for one matrix", aclnnSlogdetGetWorkspaceSize(m.t, s2.t, l0.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Slogdet int32 signOut", aclnnSlogdetGetWorkspaceSize(m.t, si.t, l0.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&m, &s0, &l0, &r, &h, &s2, &si}) release(*d);
    printf("ok slogdet\n");
}

/* Q R = A, Q^T Q = I and R upper triangular for one [m, n] matrix (dense row-major) */
static void check_qr(const char *what, const std::vector<double> &A, const std::vector<double> &Q,
                     const std::vector<double> &R, int m, int n, int qc, int rr, double tol) {
    g_checks++;
    for (int i = 0; i < m; i++)
        for (int c = 0; c < n; c++) {
            double s = 0;
            for (int t = 0; t < std::min(qc, rr); t++) s += Q[i * qc + t] * R[t * n + c];
            if (std::fabs(s - A[i * n + c]) > tol * (1 + std::fabs(A[i * n + c]))) {
                printf("FAIL %s: (Q R)[%d, %d] is %.9g, A is %.9g\n", what, i, c, s, A[i * n + c]);
                g_fail++;
                return;
            }
        }
    for (int a = 0; a < qc; a++)
        for (int b = 0; b < qc; b++) {
            double s = 0;
            for (int i = 0; i < m; i++) s += Q[i * qc + a] * Q[i * qc + b];
            if (std::fabs(s - (a == b)) > tol) {
                printf("FAIL %s: (Q^T Q)[%d, %d] is %.9g\n", what, a, b, s);
                g_fail++;
                return;
            }
        }
    for (int i = 0; i < rr; i++)
        for (int c = 0; c < std::min(i, n); c++)
            if (R[i * n + c] != 0) {
                printf("FAIL %s: R[%d, %d] is %.9g below the diagonal\n", what, i, c, R[i * n + c]);
                g_fail++;
                return;
            }
}

static void linalg_qr() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct Case {
        int m, n, mode;
        aclDataType t;
        Layout l;
    };
    for (Case c : {Case{4, 3, 0, ACL_FLOAT, TRANSPOSED}, Case{4, 3, 1, ACL_DOUBLE, STRIDED}, Case{2, 5, 0, ACL_FLOAT, CONTIG},
                   Case{5, 5, 1, ACL_FLOAT16, CONTIG}, Case{3, 4, 1, ACL_DOUBLE, TRANSPOSED}}) {
        int k = std::min(c.m, c.n), qc = c.mode == 1 ? c.m : k, rr = qc;
        std::vector<double> X = values(2 * c.m * c.n, c.t, 7);
        Dev x = make({2, c.m, c.n}, c.t, X, c.l), q = make({2, c.m, qc}, c.t, {0}), r = make({2, rr, c.n}, c.t, {0}, STRIDED);
        RUN(S, aclnnLinalgQr, x.t, c.mode, q.t, r.t);
        std::vector<double> Q = read(q), R = read(r);
        double tol = c.t == ACL_DOUBLE ? 1e-12 : c.t == ACL_FLOAT ? 1e-5 : 1e-2;
        for (int b = 0; b < 2; b++) {
            char what[96];
            snprintf(what, sizeof what, "LinalgQr %s %s [2, %d, %d] mode %d, matrix %d", dname(c.t), lname(c.l), c.m, c.n,
                     c.mode, b);
            check_qr(what, {X.begin() + b * c.m * c.n, X.begin() + (b + 1) * c.m * c.n},
                     {Q.begin() + b * c.m * qc, Q.begin() + (b + 1) * c.m * qc},
                     {R.begin() + b * rr * c.n, R.begin() + (b + 1) * rr * c.n}, c.m, c.n, qc, rr, tol);
        }
        for (Dev *d : {&x, &q, &r}) release(*d);
    }
    /* mode 2 ('r'): Q empty, R as in mode 0 */
    std::vector<double> X = values(12, ACL_FLOAT, 8);
    Dev x = make({4, 3}, ACL_FLOAT, X), q0 = make({0}, ACL_FLOAT, {0}), r = make({3, 3}, ACL_FLOAT, {0});
    Dev q = make({4, 3}, ACL_FLOAT, {0}), r0 = make({3, 3}, ACL_FLOAT, {0});
    RUN(S, aclnnLinalgQr, x.t, 2, q0.t, r.t);
    RUN(S, aclnnLinalgQr, x.t, 0, q.t, r0.t);
    compare("LinalgQr mode 2 gives mode 0's R", read(r), read(r0), 0);
    /* errors */
    Dev x1 = make({4}, ACL_FLOAT, {1}), xi = make({4, 3}, ACL_INT32, {1}), qh = make({4, 3}, ACL_FLOAT16, {0});
    Dev q44 = make({4, 4}, ACL_FLOAT, {0});
    expect_code("LinalgQr null self", aclnnLinalgQrGetWorkspaceSize(nullptr, 0, q.t, r.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LinalgQr null R", aclnnLinalgQrGetWorkspaceSize(x.t, 0, q.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LinalgQr 1-D self", aclnnLinalgQrGetWorkspaceSize(x1.t, 0, q.t, r.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgQr int32 self", aclnnLinalgQrGetWorkspaceSize(xi.t, 0, q.t, r.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgQr float16 Q of a float self", aclnnLinalgQrGetWorkspaceSize(x.t, 0, qh.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgQr mode 3", aclnnLinalgQrGetWorkspaceSize(x.t, 3, q.t, r.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgQr complete Q [4, 4] for mode 0", aclnnLinalgQrGetWorkspaceSize(x.t, 0, q44.t, r.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &q0, &r, &q, &r0, &x1, &xi, &qh, &q44}) release(*d);
    printf("ok linalg qr\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    index_fill();
    renorm();
    range();
    pdist();
    slogdet();
    linalg_qr();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
