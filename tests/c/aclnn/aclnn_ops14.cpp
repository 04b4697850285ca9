/* Math operators of the aclnn reference against host references: Diag, DiagFlat, Signbit,
 * Gcd, IsInTensorScalar / IsInScalarTensor, Addr / InplaceAddr, Cdist, LeftShift / LeftShifts /
 * RightShift, TriangularSolve, MaxUnpool2d / MaxUnpool3d, Svd, GatherNd, ScatterNd, Bucketize; each with
 * documented
 * argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: data movement, integer and bool results exactly; Addr float32 to 1e-6
 * relative (PyTorch evaluates in float32), float16 to 1e-3; Cdist float32 to 1e-6 (computed
 * in float64 and rounded once), float16 to 1e-3. Inputs include transposed and strided
 * views and broadcasting. TriangularSolve is checked by its residual: op(T) X = b to 1e-5
 * (float) and 1e-12 (double), T the used triangle of A; Svd by its properties (U diag(S) V^T = A,
 * orthonormal U and V columns, S descending and non-negative) to 1e-5 (float) and 1e-12 (double). */
#include <algorithm>
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_diag.h"
#include "aclnnop/aclnn_diag_flat.h"
#include "aclnnop/aclnn_signbit.h"
#include "aclnnop/aclnn_gcd.h"
#include "aclnnop/aclnn_isin.h"
#include "aclnnop/aclnn_isin_tensor_scalar.h"
#include "aclnnop/aclnn_addr.h"
#include "aclnnop/aclnn_cdist.h"
#include "aclnnop/aclnn_left_shift.h"
#include "aclnnop/aclnn_right_shift.h"
#include "aclnnop/aclnn_triangular_solve.h"
#include "aclnnop/aclnn_max_unpool2d.h"
#include "aclnnop/aclnn_max_unpool3d.h"
#include "aclnnop/aclnn_svd.h"
#include "aclnnop/aclnn_gather_nd.h"
#include "aclnnop/aclnn_scatter_nd.h"
#include "aclnnop/aclnn_bucketize.h"

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

static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }
static aclScalar *ls(int64_t v) { return aclCreateScalar(&v, ACL_INT64); }
static aclScalar *bs(bool v) { return aclCreateScalar(&v, ACL_BOOL); }

/* ---- Diag, DiagFlat ---- */

/* the n x n matrix (n = size + |d|) with v on diagonal d */
static std::vector<double> diag_embed_ref(const std::vector<double> &v, int64_t d, int64_t *n) {
    int64_t k = static_cast<int64_t>(v.size());
    *n = k + (d < 0 ? -d : d);
    std::vector<double> m(static_cast<size_t>(*n * *n), 0);
    for (int64_t i = 0; i < k; i++) {
        int64_t r = i + (d < 0 ? -d : 0), c = i + (d > 0 ? d : 0);
        m[static_cast<size_t>(r * *n + c)] = v[static_cast<size_t>(i)];
    }
    return m;
}

static std::vector<double> diagonal_ref(const std::vector<double> &x, int64_t rows, int64_t cols, int64_t d) {
    std::vector<double> r;
    for (int64_t i = 0; i < rows; i++) {
        int64_t c = i + d;
        if (c >= 0 && c < cols) r.push_back(x[static_cast<size_t>(i * cols + c)]);
    }
    return r;
}

static void diag() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* 1-D -> matrix: strided int32 [4] on diagonal 1, float16 [3] on diagonal -2, bool [3] */
    struct V {
        aclDataType t;
        int64_t n, d;
        Layout l;
    };
    for (V c : {V{ACL_INT32, 4, 1, STRIDED}, V{ACL_FLOAT16, 3, -2, CONTIG}, V{ACL_BOOL, 3, 0, STRIDED},
                V{ACL_BF16, 2, 0, CONTIG}, V{ACL_DOUBLE, 5, 3, STRIDED}}) {
        std::vector<double> X = values(c.n, c.t, 11, true);
        int64_t n = 0;
        std::vector<double> want = diag_embed_ref(X, c.d, &n);
        Dev x = make({c.n}, c.t, X, c.l), o = make({n, n}, c.t, {7});
        RUN(S, aclnnDiag, x.t, c.d, o.t);
        char what[96];
        snprintf(what, sizeof what, "Diag %s %s [%lld], diagonal %lld", dname(c.t), lname(c.l),
                 static_cast<long long>(c.n), static_cast<long long>(c.d));
        compare(what, read(o), want, 0);
        release(x);
        release(o);
    }
    /* matrix -> diagonal: transposed float [3, 4] and int64 [4, 3] */
    for (int64_t d : {0, 1, -1, 3, -3, 5}) {
        for (aclDataType t : {ACL_FLOAT, ACL_INT64}) {
            int64_t rows = t == ACL_FLOAT ? 3 : 4, cols = t == ACL_FLOAT ? 4 : 3;
            std::vector<double> X = values(rows * cols, t, 12);
            std::vector<double> want = diagonal_ref(X, rows, cols, d);
            Dev x = make({rows, cols}, t, X, TRANSPOSED), o = make({static_cast<int64_t>(want.size())}, t, {0}, STRIDED);
            RUN(S, aclnnDiag, x.t, d, o.t);
            char what[96];
            snprintf(what, sizeof what, "Diag %s transposed [%lld, %lld], diagonal %lld", dname(t),
                     static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(d));
            compare(what, read(o), want, 0);
            release(x);
            release(o);
        }
    }
    /* empty 1-D with diagonal 2: a [2, 2] of zeros */
    Dev e = make({0}, ACL_FLOAT, {0}), eo = make({2, 2}, ACL_FLOAT, {5});
    RUN(S, aclnnDiag, e.t, 2, eo.t);
    compare("Diag empty [0], diagonal 2", read(eo), {0, 0, 0, 0}, 0);
    /* errors */
    Dev x = make({3}, ACL_FLOAT, {1}), o = make({3, 3}, ACL_FLOAT, {0}), o4 = make({4, 4}, ACL_FLOAT, {0});
    Dev oh = make({3, 3}, ACL_FLOAT16, {0}), x3 = make({2, 2, 2}, ACL_FLOAT, {1}), o2 = make({2}, ACL_FLOAT, {0});
    expect_code("Diag null self", aclnnDiagGetWorkspaceSize(nullptr, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Diag null out", aclnnDiagGetWorkspaceSize(x.t, 0, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Diag out [4, 4] for [3] on diagonal 0", aclnnDiagGetWorkspaceSize(x.t, 0, o4.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Diag float16 out of a float self", aclnnDiagGetWorkspaceSize(x.t, 0, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Diag 3-D self", aclnnDiagGetWorkspaceSize(x3.t, 0, o2.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* DiagFlat: transposed float [2, 3] flattened row-major, diagonals 0 and -1; 0-d int64 on
     * diagonal 2; strided int8 [2, 2] on diagonal 1 */
    struct F {
        aclDataType t;
        Shape shape;
        int64_t d;
        Layout l;
    };
    for (F c : {F{ACL_FLOAT, {2, 3}, 0, TRANSPOSED}, F{ACL_FLOAT, {2, 3}, -1, TRANSPOSED}, F{ACL_INT64, {}, 2, CONTIG},
                F{ACL_INT8, {2, 2}, 1, STRIDED}, F{ACL_FLOAT16, {1, 2, 2}, 0, STRIDED}}) {
        std::vector<double> X = values(numel(c.shape), c.t, 13, true);
        int64_t n = 0;
        std::vector<double> want = diag_embed_ref(X, c.d, &n);
        Dev fx = make(c.shape, c.t, X, c.l), fo = make({n, n}, c.t, {9}, STRIDED);
        RUN(S, aclnnDiagFlat, fx.t, c.d, fo.t);
        char what[96];
        snprintf(what, sizeof what, "DiagFlat %s %s %zu-D, diagonal %lld", dname(c.t), lname(c.l), c.shape.size(),
                 static_cast<long long>(c.d));
        compare(what, read(fo), want, 0);
        release(fx);
        release(fo);
    }
    Dev f = make({2, 2}, ACL_FLOAT, {1}), fo = make({4, 4}, ACL_FLOAT, {0}), fo5 = make({5, 5}, ACL_FLOAT, {0});
    Dev fi = make({4, 4}, ACL_INT32, {0});
    expect_code("DiagFlat null out", aclnnDiagFlatGetWorkspaceSize(f.t, 0, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("DiagFlat out [4, 4] for 4 elements on diagonal 1", aclnnDiagFlatGetWorkspaceSize(f.t, 1, fo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DiagFlat out [5, 5] for 4 elements on diagonal 0", aclnnDiagFlatGetWorkspaceSize(f.t, 0, fo5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("DiagFlat int32 out of a float self", aclnnDiagFlatGetWorkspaceSize(f.t, 0, fi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&e, &eo, &x, &o, &o4, &oh, &x3, &o2, &f, &fo, &fo5, &fi}) release(*d);
    printf("ok diag\n");
}

/* ---- Signbit ---- */

static void signbit() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    std::vector<double> X = {-1.5, 0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 2.0};
    std::vector<double> want;
    for (double v : X) want.push_back(std::signbit(v) ? 1 : 0);
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}) {
        Dev x = make({2, 4}, t, X, TRANSPOSED), o = make({2, 4}, ACL_BOOL, {1});
        RUN(S, aclnnSignbit, x.t, o.t);
        /* the host values are in row-major order of the (transposed) view */
        char what[96];
        snprintf(what, sizeof what, "Signbit %s transposed [2, 4] (-0, +-inf, +-nan)", dname(t));
        compare(what, read(o), want, 0);
        release(x);
        release(o);
    }
    /* integers: x < 0; uint8 never; a float out holds 1.0 / 0.0 */
    for (aclDataType t : {ACL_INT32, ACL_INT8, ACL_INT64, ACL_UINT8, ACL_BOOL, ACL_INT16}) {
        std::vector<double> V = values(12, t, 21);
        std::vector<double> w;
        for (double v : V) w.push_back(v < 0 ? 1 : 0);
        Dev x = make({3, 4}, t, V, STRIDED), o = make({3, 4}, ACL_FLOAT, {5});
        RUN(S, aclnnSignbit, x.t, o.t);
        char what[96];
        snprintf(what, sizeof what, "Signbit %s strided [3, 4] into a float out", dname(t));
        compare(what, read(o), w, 0);
        release(x);
        release(o);
    }
    Dev x = make({4}, ACL_FLOAT, {1}), o = make({4}, ACL_BOOL, {0}), o3 = make({3}, ACL_BOOL, {0});
    Dev x9 = make({1, 1, 1, 1, 1, 1, 1, 1, 2}, ACL_FLOAT, {1}), o9 = make({1, 1, 1, 1, 1, 1, 1, 1, 2}, ACL_BOOL, {0});
    expect_code("Signbit null self", aclnnSignbitGetWorkspaceSize(nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Signbit null out", aclnnSignbitGetWorkspaceSize(x.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Signbit out [3] for self [4]", aclnnSignbitGetWorkspaceSize(x.t, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Signbit 9-D self", aclnnSignbitGetWorkspaceSize(x9.t, o9.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &o, &o3, &x9, &o9}) release(*d);
    printf("ok signbit\n");
}

/* ---- Gcd ---- */

static int64_t gcd_ref(int64_t a, int64_t b) {
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (a != 0) {
        int64_t c = a;
        a = b % a;
        b = c;
    }
    return b;
}

static void gcd() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct G {
        aclDataType a, b, o;
        Layout l;
    };
    for (G c : {G{ACL_INT32, ACL_INT32, ACL_INT32, TRANSPOSED}, G{ACL_INT16, ACL_INT64, ACL_INT64, STRIDED},
                G{ACL_UINT8, ACL_INT8, ACL_INT16, CONTIG}, G{ACL_INT8, ACL_INT8, ACL_INT32, STRIDED}}) {
        /* self [3, 4] with other [4] (broadcast over the rows) */
        std::vector<double> A = values(12, c.a, 31), B = values(4, c.b, 32);
        A[0] = 0;
        B[0] = 0; /* gcd(0, 0) = 0 */
        std::vector<double> want;
        for (int i = 0; i < 12; i++)
            want.push_back(as_type(static_cast<double>(gcd_ref(static_cast<int64_t>(A[i]), static_cast<int64_t>(B[i % 4]))), c.o));
        Dev x = make({3, 4}, c.a, A, c.l), y = make({4}, c.b, B, STRIDED), o = make({3, 4}, c.o, {0});
        RUN(S, aclnnGcd, x.t, y.t, o.t);
        char what[96];
        snprintf(what, sizeof what, "Gcd %s %s [3, 4] with %s [4] into %s", lname(c.l), dname(c.a), dname(c.b), dname(c.o));
        compare(what, read(o), want, 0);
        release(x);
        release(y);
        release(o);
    }
    Dev x = make({4}, ACL_INT32, {12}), y = make({4}, ACL_INT32, {18}), o = make({4}, ACL_INT32, {0});
    Dev xf = make({4}, ACL_FLOAT, {1}), o3 = make({3}, ACL_INT32, {0}), x0 = make({}, ACL_INT32, {3});
    Dev ob = make({4}, ACL_BOOL, {0}), o16 = make({4}, ACL_INT16, {0}), y64 = make({4}, ACL_INT64, {0});
    expect_code("Gcd null other", aclnnGcdGetWorkspaceSize(x.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Gcd float self", aclnnGcdGetWorkspaceSize(xf.t, y.t, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Gcd out [3] for [4]", aclnnGcdGetWorkspaceSize(x.t, y.t, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Gcd 0-d self", aclnnGcdGetWorkspaceSize(x0.t, y.t, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Gcd bool out", aclnnGcdGetWorkspaceSize(x.t, y.t, ob.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* int16 out of an int64 result: CanCast allows a narrower integer (PyTorch's rule) */
    expect_code("Gcd int64 result into an int16 out", aclnnGcdGetWorkspaceSize(x.t, y64.t, o16.t, &ws, &ex), 0);
    aclDestroyAclOpExecutor(ex);
    for (Dev *d : {&x, &y, &o, &xf, &o3, &x0, &ob, &o16, &y64}) release(*d);
    printf("ok gcd\n");
}

/* ---- IsIn ---- */

static void isin() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* IsInTensorScalar: float [2, 3] transposed against 2.5, and inverted */
    std::vector<double> X = {2.5, 1.0, NAN, 2.5, -2.5, 0.0};
    Dev x = make({2, 3}, ACL_FLOAT, X, TRANSPOSED), o = make({2, 3}, ACL_BOOL, {0}, STRIDED);
    aclScalar *s = fs(2.5f);
    for (bool inv : {false, true}) {
        RUN(S, aclnnIsInTensorScalar, x.t, s, false, inv, o.t);
        std::vector<double> want;
        for (double v : X) want.push_back((v == 2.5) != inv ? 1 : 0);
        compare(inv ? "IsInTensorScalar float, 2.5, invert (NaN not in: true)" : "IsInTensorScalar float, 2.5", read(o),
                want, 0);
    }
    /* int32 against the float scalar 3.0 (compared in float32), float16 against 0.1 (the
     * scalar rounded to float16 first, as a float16 kernel sees it) */
    Dev xi = make({5}, ACL_INT32, {1, 3, -3, 3, 0}, STRIDED), oi = make({5}, ACL_BOOL, {0});
    aclScalar *three = fs(3.0f);
    RUN(S, aclnnIsInTensorScalar, xi.t, three, true, false, oi.t);
    compare("IsInTensorScalar int32 against 3.0", read(oi), {0, 1, 0, 1, 0}, 0);
    Dev xh = make({3}, ACL_FLOAT16, {0.1, 0.2, 0.1}), oh = make({3}, ACL_BOOL, {0});
    aclScalar *tenth = fs(0.1f);
    RUN(S, aclnnIsInTensorScalar, xh.t, tenth, false, false, oh.t);
    compare("IsInTensorScalar float16 against 0.1", read(oh), {1, 0, 1}, 0);
    /* IsInScalarTensor: 5 in a transposed int64 [2, 3] (present, absent, inverted) */
    Dev t = make({2, 3}, ACL_INT64, {1, 2, 3, 4, 5, 6}, TRANSPOSED), so = make({}, ACL_BOOL, {0});
    aclScalar *five = ls(5), *seven = ls(7);
    RUN(S, aclnnIsInScalarTensor, five, t.t, false, false, so.t);
    compare("IsInScalarTensor 5 in int64 [2, 3]", read(so), {1}, 0);
    RUN(S, aclnnIsInScalarTensor, seven, t.t, false, false, so.t);
    compare("IsInScalarTensor 7 in int64 [2, 3]", read(so), {0}, 0);
    RUN(S, aclnnIsInScalarTensor, seven, t.t, false, true, so.t);
    compare("IsInScalarTensor 7 in int64 [2, 3], invert", read(so), {1}, 0);
    /* 2.5 in a strided float16 [4] into a [1] out; an empty test tensor holds nothing */
    Dev th = make({4}, ACL_FLOAT16, {0.5, 2.5, 1, 1}, STRIDED), s1 = make({1}, ACL_BOOL, {0}), te = make({0}, ACL_FLOAT, {0});
    RUN(S, aclnnIsInScalarTensor, s, th.t, false, false, s1.t);
    compare("IsInScalarTensor 2.5 in float16 [4]", read(s1), {1}, 0);
    RUN(S, aclnnIsInScalarTensor, s, te.t, false, false, s1.t);
    compare("IsInScalarTensor 2.5 in an empty tensor", read(s1), {0}, 0);
    /* errors */
    Dev of = make({2, 3}, ACL_FLOAT, {0}), o2 = make({2}, ACL_BOOL, {0}), o5 = make({3, 2}, ACL_BOOL, {0});
    aclScalar *b = bs(true);
    expect_code("IsInTensorScalar null testElement", aclnnIsInTensorScalarGetWorkspaceSize(x.t, nullptr, false, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IsInTensorScalar float out", aclnnIsInTensorScalarGetWorkspaceSize(x.t, s, false, false, of.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IsInTensorScalar out [3, 2] for [2, 3]", aclnnIsInTensorScalarGetWorkspaceSize(x.t, s, false, false, o5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IsInTensorScalar bool testElement", aclnnIsInTensorScalarGetWorkspaceSize(x.t, b, false, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IsInScalarTensor null element", aclnnIsInScalarTensorGetWorkspaceSize(nullptr, t.t, false, false, so.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IsInScalarTensor out [2]", aclnnIsInScalarTensorGetWorkspaceSize(five, t.t, false, false, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclScalar *v : {s, three, tenth, five, seven, b}) aclDestroyScalar(v);
    for (Dev *d : {&x, &o, &xi, &oi, &xh, &oh, &t, &so, &th, &s1, &te, &of, &o2, &o5}) release(*d);
    printf("ok isin\n");
}

/* ---- Addr ---- */

static std::vector<double> addr_ref(const std::vector<double> &self, const Shape &sshape, const std::vector<double> &v1,
                                    const std::vector<double> &v2, double beta, double alpha, aclDataType t) {
    size_t n = v1.size(), m = v2.size();
    std::vector<double> r(n * m);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < m; j++) {
            /* self broadcast: [n, m], [m], [1, m], [n, 1] or [] */
            size_t si = 0;
            if (sshape.size() == 2) si = (sshape[0] == 1 ? 0 : i) * sshape[1] + (sshape[1] == 1 ? 0 : j);
            else if (sshape.size() == 1) si = sshape[0] == 1 ? 0 : j;
            double x = self[si];
            double v;
            if (t == ACL_FLOAT || t == ACL_FLOAT16 || t == ACL_BF16) {
                float p = static_cast<float>(alpha) * static_cast<float>(v1[i]) * static_cast<float>(v2[j]);
                v = beta == 0 ? p : static_cast<float>(beta) * static_cast<float>(x) + p;
            } else if (t == ACL_BOOL) {
                v = ((beta != 0 && x != 0) || (alpha != 0 && v1[i] != 0 && v2[j] != 0)) ? 1 : 0;
            } else {
                v = beta == 0 ? alpha * v1[i] * v2[j] : beta * x + alpha * v1[i] * v2[j];
            }
            r[i * m + j] = as_type(v, t);
        }
    return r;
}

static void addr() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* float: transposed self [3, 4], beta 0.5, alpha 2; float16 with self [4] broadcast */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        std::vector<double> X = values(12, t, 41), A = values(3, t, 42), B = values(4, t, 43);
        aclScalar *beta = fs(0.5f), *alpha = fs(2.0f);
        Dev x = make({3, 4}, t, X, TRANSPOSED), v1 = make({3}, t, A, STRIDED), v2 = make({4}, t, B), o = make({3, 4}, t, {0});
        RUN(S, aclnnAddr, x.t, v1.t, v2.t, beta, alpha, o.t);
        char what[96];
        snprintf(what, sizeof what, "Addr %s transposed self [3, 4], beta 0.5, alpha 2", dname(t));
        compare(what, read(o), addr_ref(X, {3, 4}, A, B, 0.5, 2, t), t == ACL_FLOAT ? 1e-6 : 1e-3);
        std::vector<double> R = values(4, t, 44);
        Dev r = make({4}, t, R, STRIDED);
        RUN(S, aclnnAddr, r.t, v1.t, v2.t, nullptr, nullptr, o.t);
        snprintf(what, sizeof what, "Addr %s self [4] broadcast, default beta and alpha", dname(t));
        compare(what, read(o), addr_ref(R, {4}, A, B, 1, 1, t), t == ACL_FLOAT ? 1e-6 : 1e-3);
        aclDestroyScalar(beta);
        aclDestroyScalar(alpha);
        for (Dev *d : {&x, &v1, &v2, &o, &r}) release(*d);
    }
    /* beta 0: self's NaN is not read */
    Dev xn = make({2, 2}, ACL_FLOAT, {NAN}), a2 = make({2}, ACL_FLOAT, {1, 2}), b2 = make({2}, ACL_FLOAT, {3, 4});
    Dev on = make({2, 2}, ACL_FLOAT, {0});
    aclScalar *zero = fs(0), *one = fs(1);
    RUN(S, aclnnAddr, xn.t, a2.t, b2.t, zero, one, on.t);
    compare("Addr beta 0 ignores a NaN self", read(on), {3, 4, 6, 8}, 0);
    /* int32 self [3, 1] with int16 vectors, integer beta 3 and alpha -2; int8 wraps */
    std::vector<double> X = values(3, ACL_INT32, 45), A = values(3, ACL_INT16, 46), B = values(2, ACL_INT16, 47);
    Dev xi = make({3, 1}, ACL_INT32, X), ai = make({3}, ACL_INT16, A), bi = make({2}, ACL_INT16, B, STRIDED);
    Dev oi = make({3, 2}, ACL_INT64, {0});
    aclScalar *b3 = ls(3), *am2 = ls(-2);
    RUN(S, aclnnAddr, xi.t, ai.t, bi.t, b3, am2, oi.t);
    compare("Addr int32 self [3, 1] with int16 vectors, beta 3, alpha -2 (into int64)", read(oi),
            addr_ref(X, {3, 1}, A, B, 3, -2, ACL_INT32), 0);
    /* bool: (beta && self) || (alpha && v1 && v2) */
    Dev xb = make({2, 2}, ACL_BOOL, {1, 0, 0, 0}), ab = make({2}, ACL_BOOL, {1, 0}), bb = make({2}, ACL_BOOL, {0, 1});
    Dev ob = make({2, 2}, ACL_BOOL, {0});
    aclScalar *t1 = bs(true);
    RUN(S, aclnnAddr, xb.t, ab.t, bb.t, t1, t1, ob.t);
    compare("Addr bool", read(ob), {1, 1, 0, 0}, 0);
    /* InplaceAddr on a strided float self [2, 3] */
    std::vector<double> Y = values(6, ACL_FLOAT, 48), C = values(2, ACL_FLOAT, 49), D = values(3, ACL_FLOAT, 50);
    Dev y = make({2, 3}, ACL_FLOAT, Y, STRIDED), c = make({2}, ACL_FLOAT, C), d = make({3}, ACL_FLOAT, D);
    aclScalar *bh = fs(-1.5f), *a3 = fs(0.25f);
    RUN(S, aclnnInplaceAddr, y.t, c.t, d.t, bh, a3);
    compare("InplaceAddr strided float [2, 3], beta -1.5, alpha 0.25", read(y), addr_ref(Y, {2, 3}, C, D, -1.5, 0.25, ACL_FLOAT),
            1e-6);
    /* errors */
    Dev a22 = make({2, 2}, ACL_FLOAT, {1}), x33 = make({3, 3}, ACL_FLOAT, {1}), o23 = make({2, 3}, ACL_FLOAT, {0});
    Dev o32 = make({3, 2}, ACL_INT32, {0}), o23i = make({2, 3}, ACL_INT32, {0});
    expect_code("Addr null vec2", aclnnAddrGetWorkspaceSize(y.t, c.t, nullptr, nullptr, nullptr, o23.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Addr null out", aclnnAddrGetWorkspaceSize(y.t, c.t, d.t, nullptr, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Addr 2-D vec1", aclnnAddrGetWorkspaceSize(y.t, a22.t, d.t, nullptr, nullptr, o23.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Addr self [3, 3] for a [2, 3] product", aclnnAddrGetWorkspaceSize(x33.t, c.t, d.t, nullptr, nullptr, o23.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Addr float beta with int tensors", aclnnAddrGetWorkspaceSize(xi.t, ai.t, bi.t, bh, nullptr, o32.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Addr float result into an int32 out", aclnnAddrGetWorkspaceSize(y.t, c.t, d.t, nullptr, nullptr, o23i.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceAddr selfRef [2, 3] for a [3, 2] product", aclnnInplaceAddrGetWorkspaceSize(y.t, ai.t, c.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclScalar *v : {zero, one, b3, am2, t1, bh, a3}) aclDestroyScalar(v);
    for (Dev *v : {&xn, &a2, &b2, &on, &xi, &ai, &bi, &oi, &xb, &ab, &bb, &ob, &y, &c, &d, &a22, &x33, &o23, &o32, &o23i}) release(*v);
    printf("ok addr\n");
}

/* ---- Cdist ---- */

static double pdist_ref(const double *a, const double *b, int64_t m, double p) {
    double s = 0, mx = 0, nz = 0;
    for (int64_t k = 0; k < m; k++) {
        double d = std::fabs(a[k] - b[k]);
        s += std::pow(d, p);
        mx = std::max(mx, d);
        nz += d != 0;
    }
    return std::isinf(p) ? mx : p == 0 ? nz : std::pow(s, 1 / p);
}

static void cdist() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16})
        for (float p : {2.0f, 1.0f, 0.0f, 1.5f, static_cast<float>(INFINITY)}) {
            /* x1 [3, 4] (batch broadcast) against x2 [2, 5, 4] transposed: out [2, 3, 5] */
            std::vector<double> A = values(12, t, 51), B = values(40, t, 52);
            B[4] = A[0]; /* equal elements (p 0 counts differences) */
            Dev x1 = make({3, 4}, t, A, STRIDED), x2 = make({2, 5, 4}, t, B, TRANSPOSED), o = make({2, 3, 5}, t, {0});
            RUN(S, aclnnCdist, x1.t, x2.t, p, p == 2.0f ? 2 : 0, o.t);
            std::vector<double> want;
            for (int b = 0; b < 2; b++)
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 5; j++) want.push_back(pdist_ref(&A[i * 4], &B[(b * 5 + j) * 4], 4, p));
            char what[96];
            snprintf(what, sizeof what, "Cdist %s [3, 4] with [2, 5, 4], p %g", dname(t), p);
            compare(what, read(o), as(want, t), t == ACL_FLOAT ? 1e-6 : 1e-3);
            release(x1);
            release(x2);
            release(o);
        }
    /* empty: no rows in x1 */
    Dev e1 = make({0, 3}, ACL_FLOAT, {0}), e2 = make({2, 3}, ACL_FLOAT, {1}), eo = make({0, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnCdist, e1.t, e2.t, 1.0f, 0, eo.t);
    g_checks++;
    /* errors */
    Dev x1 = make({3, 4}, ACL_FLOAT, {1}), x2 = make({5, 4}, ACL_FLOAT, {2}), o = make({3, 5}, ACL_FLOAT, {0});
    Dev xi = make({3, 4}, ACL_INT32, {1}), x23 = make({5, 3}, ACL_FLOAT, {1}), o55 = make({5, 5}, ACL_FLOAT, {0});
    Dev x1d = make({4}, ACL_FLOAT, {1}), oh = make({3, 5}, ACL_FLOAT16, {0});
    expect_code("Cdist null x2", aclnnCdistGetWorkspaceSize(x1.t, nullptr, 1.0f, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Cdist p 2 with compute_mode 0", aclnnCdistGetWorkspaceSize(x1.t, x2.t, 2.0f, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Cdist p -1", aclnnCdistGetWorkspaceSize(x1.t, x2.t, -1.0f, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Cdist int32 x1", aclnnCdistGetWorkspaceSize(xi.t, x2.t, 1.0f, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Cdist last dimensions 4 and 3", aclnnCdistGetWorkspaceSize(x1.t, x23.t, 1.0f, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Cdist out [5, 5] for [3, 5]", aclnnCdistGetWorkspaceSize(x1.t, x2.t, 1.0f, 0, o55.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Cdist 1-D x1", aclnnCdistGetWorkspaceSize(x1d.t, x2.t, 1.0f, 0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Cdist float16 out of float inputs", aclnnCdistGetWorkspaceSize(x1.t, x2.t, 1.0f, 0, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&e1, &e2, &eo, &x1, &x2, &o, &xi, &x23, &o55, &x1d, &oh}) release(*d);
    printf("ok cdist\n");
}

/* ---- LeftShift, LeftShifts, RightShift ---- */

static int bits_of(aclDataType t) { return static_cast<int>(dsize(t)) * 8; }

/* PyTorch's shifts in type t; a negative count counts as the width or more (the RightShift
 * reference's rule: 0 to the left, the sign fill to the right) */
static double shift_ref(double a, double b, bool left, aclDataType t) {
    int64_t v = static_cast<int64_t>(a), n = static_cast<int64_t>(b);
    int bits = bits_of(t);
    if (n < 0) n = bits;
    if (left) {
        if (n >= bits) return 0;
        return as_type(static_cast<double>(static_cast<int64_t>(static_cast<uint64_t>(v) << n)), t);
    }
    if (t == ACL_UINT8) return n >= bits ? 0 : static_cast<double>(static_cast<uint8_t>(v) >> n);
    return static_cast<double>(v >> std::min<int64_t>(n, bits - 1));
}

static void shifts() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct C {
        aclDataType a, b, o;
        Layout l;
    };
    for (bool left : {true, false})
        for (C c : {C{ACL_INT32, ACL_INT32, ACL_INT32, TRANSPOSED}, C{ACL_INT8, ACL_INT8, ACL_INT8, STRIDED},
                    C{ACL_UINT8, ACL_UINT8, ACL_UINT8, CONTIG}, C{ACL_INT16, ACL_INT64, ACL_INT64, STRIDED},
                    C{ACL_INT8, ACL_INT8, ACL_INT32, CONTIG}}) {
            /* self [3, 4] with counts [4] (broadcast): 0, 3, the width, and one past it */
            std::vector<double> A = values(12, c.a, 61);
            int w = bits_of(c.a == c.b ? c.a : ACL_INT64);
            std::vector<double> B = {0, 3, static_cast<double>(w - 1), static_cast<double>(w + 1)};
            aclDataType ct = c.a == c.b ? c.a : ACL_INT64;
            std::vector<double> want;
            for (int i = 0; i < 12; i++) want.push_back(as_type(shift_ref(A[i], B[i % 4], left, ct), c.o));
            Dev x = make({3, 4}, c.a, A, c.l), y = make({4}, c.b, B, STRIDED), o = make({3, 4}, c.o, {0});
            if (left) RUN(S, aclnnLeftShift, x.t, y.t, o.t);
            else RUN(S, aclnnRightShift, x.t, y.t, o.t);
            char what[128];
            snprintf(what, sizeof what, "%s %s %s [3, 4] by %s [4] into %s", left ? "LeftShift" : "RightShift", lname(c.l),
                     dname(c.a), dname(c.b), dname(c.o));
            compare(what, read(o), want, 0);
            release(x);
            release(y);
            release(o);
        }
    /* LeftShifts: the reference's example (int64 {10, 20, 30, 40} << 2), int8 wrapping by 3 */
    Dev e = make({1, 4}, ACL_INT64, {10, 20, 30, 40}), eo = make({1, 4}, ACL_INT64, {0});
    aclScalar *two = ls(2);
    RUN(S, aclnnLeftShifts, e.t, two, eo.t);
    compare("LeftShifts the reference's example", read(eo), {40, 80, 120, 160}, 0);
    std::vector<double> A = values(8, ACL_INT8, 62);
    Dev x = make({2, 4}, ACL_INT8, A, TRANSPOSED), o = make({2, 4}, ACL_INT8, {0});
    int8_t three = 3;
    aclScalar *s3 = aclCreateScalar(&three, ACL_INT8);
    RUN(S, aclnnLeftShifts, x.t, s3, o.t);
    std::vector<double> want;
    for (double v : A) want.push_back(shift_ref(v, 3, true, ACL_INT8));
    compare("LeftShifts transposed int8 [2, 4] by 3 (wrapping)", read(o), want, 0);
    /* negative counts: the sign fill to the right, 0 to the left (PyTorch, and the RightShift
     * reference's example: 1 >> -1 is 0) */
    Dev n = make({4}, ACL_INT32, {-7, -8, 9, 1}), nc = make({4}, ACL_INT32, {-1, 1, -5, -1}), no = make({4}, ACL_INT32, {0});
    RUN(S, aclnnRightShift, n.t, nc.t, no.t);
    compare("RightShift int32 with negative counts", read(no), {-1, -4, 0, 0}, 0);
    Dev lo = make({4}, ACL_INT32, {0});
    RUN(S, aclnnLeftShift, n.t, nc.t, lo.t);
    compare("LeftShift int32 with negative counts", read(lo), {0, -16, 0, 0}, 0);
    /* errors */
    Dev xf = make({4}, ACL_FLOAT, {1}), y = make({4}, ACL_INT32, {1}), o4 = make({4}, ACL_INT32, {0}), o3 = make({3}, ACL_INT32, {0});
    Dev ob = make({4}, ACL_BOOL, {0});
    aclScalar *fl = fs(1.0f);
    expect_code("LeftShift null shiftBits", aclnnLeftShiftGetWorkspaceSize(y.t, nullptr, o4.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("RightShift null input", aclnnRightShiftGetWorkspaceSize(nullptr, y.t, o4.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LeftShifts null shiftBits", aclnnLeftShiftsGetWorkspaceSize(y.t, nullptr, o4.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LeftShift float self", aclnnLeftShiftGetWorkspaceSize(xf.t, y.t, o4.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("RightShift out [3] for [4]", aclnnRightShiftGetWorkspaceSize(y.t, y.t, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("RightShift bool out", aclnnRightShiftGetWorkspaceSize(y.t, y.t, ob.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LeftShifts float shiftBits", aclnnLeftShiftsGetWorkspaceSize(y.t, fl, o4.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (aclScalar *v : {two, s3, fl}) aclDestroyScalar(v);
    for (Dev *d : {&e, &eo, &x, &o, &n, &nc, &no, &xf, &y, &o4, &o3, &ob}) release(*d);
    printf("ok shifts\n");
}

/* ---- TriangularSolve ---- */

static void triangular_solve() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct C {
        aclDataType t;
        bool upper, trans, unit;
        Layout la;
    };
    for (C c : {C{ACL_FLOAT, true, false, false, TRANSPOSED}, C{ACL_DOUBLE, false, false, false, STRIDED},
                C{ACL_DOUBLE, true, true, false, CONTIG}, C{ACL_FLOAT, false, true, true, STRIDED},
                C{ACL_FLOAT, true, false, true, CONTIG}}) {
        /* A [2, 4, 4] (a full matrix: only the used triangle may be read), b [4, 3] broadcast */
        const int m = 4, n = 3;
        std::vector<double> A = values(2 * m * m, c.t, 71), B = values(m * n, c.t, 72);
        for (auto &e : A) e = as_type(e / 8, c.t); /* small off-diagonal entries: well conditioned */
        for (int bi = 0; bi < 2; bi++)
            for (int i = 0; i < m; i++) A[bi * m * m + i * m + i] = 3 + i;
        Dev a = make({2, m, m}, c.t, A, c.la), b = make({m, n}, c.t, B, STRIDED);
        Dev x = make({2, m, n}, c.t, {0}), mo = make({2, m, m}, c.t, {0}, TRANSPOSED);
        RUN(S, aclnnTriangularSolve, b.t, a.t, c.upper, c.trans, c.unit, x.t, mo.t);
        std::vector<double> X = read(x), M = read(mo);
        char what[128];
        snprintf(what, sizeof what, "TriangularSolve %s %s A, upper %d, transpose %d, unitriangular %d", dname(c.t),
                 lname(c.la), c.upper, c.trans, c.unit);
        double tol = c.t == ACL_DOUBLE ? 1e-12 : 1e-5;
        std::vector<double> resid, want_b, want_m;
        for (int bi = 0; bi < 2; bi++) {
            const double *am = &A[bi * m * m];
            auto tri = [&](int i, int j) { return c.upper ? j >= i : j <= i; };
            auto t = [&](int i, int j) {
                int r = c.trans ? j : i, k = c.trans ? i : j;
                if (r == k && c.unit) return 1.0;
                return tri(r, k) ? am[r * m + k] : 0.0;
            };
            for (int i = 0; i < m; i++)
                for (int col = 0; col < n; col++) {
                    double s = 0;
                    for (int k = 0; k < m; k++) s += t(i, k) * X[(bi * m + k) * n + col];
                    resid.push_back(s);
                    want_b.push_back(B[i * n + col]);
                }
            for (int i = 0; i < m; i++)
                for (int j = 0; j < m; j++) want_m.push_back(tri(i, j) ? am[i * m + j] : 0);
        }
        compare(what, resid, want_b, tol);
        snprintf(what, sizeof what, "TriangularSolve %s mOut (the used triangle of A)", dname(c.t));
        compare(what, M, want_m, 0);
        for (Dev *d : {&a, &b, &x, &mo}) release(*d);
    }
    /* errors */
    Dev a = make({3, 3}, ACL_FLOAT, {1}), b = make({3, 2}, ACL_FLOAT, {1}), x = make({3, 2}, ACL_FLOAT, {0});
    Dev mo = make({3, 3}, ACL_FLOAT, {0}), a34 = make({3, 4}, ACL_FLOAT, {1}), b42 = make({4, 2}, ACL_FLOAT, {1});
    Dev ai = make({3, 3}, ACL_INT32, {1}), ad = make({3, 3}, ACL_DOUBLE, {1}), bd = make({3, 2}, ACL_DOUBLE, {1});
    Dev xd = make({3, 2}, ACL_DOUBLE, {0}), md = make({3, 3}, ACL_DOUBLE, {0}), x22 = make({2, 2}, ACL_FLOAT, {0});
    expect_code("TriangularSolve null A", aclnnTriangularSolveGetWorkspaceSize(b.t, nullptr, true, false, false, x.t, mo.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("TriangularSolve null mOut", aclnnTriangularSolveGetWorkspaceSize(b.t, a.t, true, false, false, x.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("TriangularSolve non-square A", aclnnTriangularSolveGetWorkspaceSize(b.t, a34.t, true, false, false, x.t, mo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TriangularSolve self with 4 rows for a 3x3 A",
                aclnnTriangularSolveGetWorkspaceSize(b42.t, a.t, true, false, false, x.t, mo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("TriangularSolve int32 A", aclnnTriangularSolveGetWorkspaceSize(b.t, ai.t, true, false, false, x.t, mo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TriangularSolve double with unitriangular",
                aclnnTriangularSolveGetWorkspaceSize(bd.t, ad.t, true, false, true, xd.t, md.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("TriangularSolve xOut [2, 2]", aclnnTriangularSolveGetWorkspaceSize(b.t, a.t, true, false, false, x22.t, mo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&a, &b, &x, &mo, &a34, &b42, &ai, &ad, &bd, &xd, &md, &x22}) release(*d);
    printf("ok triangular solve\n");
}

/* ---- MaxUnpool2d, MaxUnpool3d ---- */

static void max_unpool() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct C {
        aclDataType t, it;
        Shape in, osz;
        Layout l;
    };
    for (C c : {C{ACL_FLOAT, ACL_INT64, {2, 3, 2, 2}, {4, 3}, TRANSPOSED}, C{ACL_INT32, ACL_INT32, {3, 2, 3}, {3, 4}, STRIDED},
                C{ACL_FLOAT16, ACL_INT64, {1, 2, 1, 2, 2}, {2, 3, 2}, CONTIG}, C{ACL_INT64, ACL_INT32, {2, 2, 1, 2}, {2, 2, 2}, STRIDED},
                C{ACL_DOUBLE, ACL_INT64, {1, 1, 2, 2}, {2, 2}, CONTIG}}) {
        int k = static_cast<int>(c.osz.size());
        int64_t in_plane = 1, out_plane = 1;
        for (size_t d = c.in.size() - k; d < c.in.size(); d++) in_plane *= c.in[d];
        for (int64_t v : c.osz) out_plane *= v;
        int64_t planes = numel(c.in) / in_plane;
        std::vector<double> X = values(numel(c.in), c.t, 81, true), I;
        /* distinct positions per plane (a stride through the output plane), one duplicate in
         * plane 0 (the later element wins) */
        for (int64_t p = 0; p < planes; p++)
            for (int64_t i = 0; i < in_plane; i++) I.push_back(static_cast<double>((i * 5 + p) % out_plane));
        if (in_plane > 1) I[1] = I[0];
        std::vector<double> want(static_cast<size_t>(planes * out_plane), 0);
        for (int64_t p = 0; p < planes; p++)
            for (int64_t i = 0; i < in_plane; i++) want[p * out_plane + static_cast<int64_t>(I[p * in_plane + i])] = X[p * in_plane + i];
        Shape oshape(c.in.begin(), c.in.end() - k);
        oshape.insert(oshape.end(), c.osz.begin(), c.osz.end());
        Dev x = make(c.in, c.t, X, c.l), ix = make(c.in, c.it, I, c.l), o = make(oshape, c.t, {9}, STRIDED);
        aclIntArray *os = aclCreateIntArray(c.osz.data(), c.osz.size());
        char what[128];
        if (k == 2) {
            RUN(S, aclnnMaxUnpool2d, x.t, ix.t, os, o.t);
        } else {
            int64_t one[3] = {1, 1, 1}, zero[3] = {0, 0, 0};
            aclIntArray *st = aclCreateIntArray(one, 3), *pd = aclCreateIntArray(zero, 3);
            RUN(S, aclnnMaxUnpool3d, x.t, ix.t, os, st, pd, o.t);
            aclDestroyIntArray(st);
            aclDestroyIntArray(pd);
        }
        snprintf(what, sizeof what, "MaxUnpool%dd %s %s %zu-D self with %s indices", k, dname(c.t), lname(c.l), c.in.size(),
                 dname(c.it));
        compare(what, read(o), want, 0);
        aclDestroyIntArray(os);
        for (Dev *d : {&x, &ix, &o}) release(*d);
    }
    /* an index outside the plane fails the task at synchronisation */
    Dev x = make({1, 2, 2}, ACL_FLOAT, {1, 2, 3, 4}), ib = make({1, 2, 2}, ACL_INT64, {0, 1, 2, 9}), o = make({1, 3, 3}, ACL_FLOAT, {0});
    int64_t o33[2] = {3, 3}, o22[2] = {2, 1}, o3[3] = {1, 3, 3}, one3[3] = {1, 1, 1}, neg3[3] = {0, -1, 0};
    aclIntArray *os = aclCreateIntArray(o33, 2), *small = aclCreateIntArray(o22, 2), *os3 = aclCreateIntArray(o3, 3);
    aclIntArray *st = aclCreateIntArray(one3, 3), *pd = aclCreateIntArray(neg3, 3);
    NN(aclnnMaxUnpool2dGetWorkspaceSize(x.t, ib.t, os, o.t, &ws, &ex));
    NN(aclnnMaxUnpool2d(nullptr, ws, ex, S));
    g_checks++;
    aclError se = aclrtSynchronizeStream(S);
    if (se == ACL_SUCCESS) {
        printf("FAIL MaxUnpool2d index 9 of a 3x3 plane: the task succeeded\n");
        g_fail++;
    } else {
        printf("error MaxUnpool2d index 9 of a 3x3 plane (task): %s\n", test_msg());
    }
    /* errors */
    Dev xi = make({1, 2, 2}, ACL_BOOL, {1}), i32 = make({1, 2, 3}, ACL_INT64, {0}), x2 = make({2, 2}, ACL_FLOAT, {1});
    Dev ifl = make({1, 2, 2}, ACL_FLOAT, {0}), oh = make({1, 3, 3}, ACL_FLOAT16, {0}), o5 = make({1, 1, 3, 3}, ACL_FLOAT, {0});
    Dev x4 = make({1, 1, 2, 2}, ACL_FLOAT, {1}), i4 = make({1, 1, 2, 2}, ACL_INT64, {0});
    expect_code("MaxUnpool2d null indices", aclnnMaxUnpool2dGetWorkspaceSize(x.t, nullptr, os, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MaxUnpool2d null outputSize", aclnnMaxUnpool2dGetWorkspaceSize(x.t, ib.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MaxUnpool2d bool self", aclnnMaxUnpool2dGetWorkspaceSize(xi.t, ib.t, os, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool2d indices of another shape", aclnnMaxUnpool2dGetWorkspaceSize(x.t, i32.t, os, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool2d 2-D self", aclnnMaxUnpool2dGetWorkspaceSize(x2.t, ib.t, os, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool2d float indices", aclnnMaxUnpool2dGetWorkspaceSize(x.t, ifl.t, os, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool2d float16 out of a float self", aclnnMaxUnpool2dGetWorkspaceSize(x.t, ib.t, os, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool2d outputSize [2, 1] smaller than the 2x2 input plane",
                aclnnMaxUnpool2dGetWorkspaceSize(x.t, ib.t, small, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool2d out [1, 1, 3, 3] for a 3-D self", aclnnMaxUnpool2dGetWorkspaceSize(x.t, ib.t, os, o5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool3d negative padding", aclnnMaxUnpool3dGetWorkspaceSize(x4.t, i4.t, os3, st, pd, o5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MaxUnpool3d outputSize of 2 values", aclnnMaxUnpool3dGetWorkspaceSize(x4.t, i4.t, os, st, st, o5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {os, small, os3, st, pd}) aclDestroyIntArray(a);
    for (Dev *d : {&x, &ib, &o, &xi, &i32, &x2, &ifl, &oh, &o5, &x4, &i4}) release(*d);
    printf("ok max unpool\n");
}

/* ---- Svd ---- */

static void check_svd(const char *what, const std::vector<double> &A, const std::vector<double> &S, const std::vector<double> &U,
                      const std::vector<double> &V, int m, int n, int uc, int vc, double tol) {
    int k = std::min(m, n);
    std::vector<double> rec, want;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double r = 0;
            for (int l = 0; l < k; l++) r += U[i * uc + l] * S[l] * V[j * vc + l];
            rec.push_back(r);
            want.push_back(A[i * n + j]);
        }
    char w[160];
    snprintf(w, sizeof w, "%s: U diag(S) V^T = A", what);
    compare(w, rec, want, tol);
    for (int which = 0; which < 2; which++) {
        const std::vector<double> &Q = which ? V : U;
        int rows = which ? n : m, cols = which ? vc : uc;
        std::vector<double> g, eye;
        for (int p = 0; p < cols; p++)
            for (int q = 0; q < cols; q++) {
                double d = 0;
                for (int i = 0; i < rows; i++) d += Q[i * cols + p] * Q[i * cols + q];
                g.push_back(d);
                eye.push_back(p == q ? 1 : 0);
            }
        snprintf(w, sizeof w, "%s: %s has orthonormal columns", what, which ? "V" : "U");
        compare(w, g, eye, tol);
    }
    g_checks++;
    for (int l = 0; l < k; l++)
        if (S[l] < 0 || (l > 0 && S[l] > S[l - 1])) {
            printf("FAIL %s: S is not descending and non-negative (S[%d] = %g)\n", what, l, S[l]);
            g_fail++;
            break;
        }
}

static void svd() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    struct C {
        int m, n;
        bool full;
        aclDataType t;
        Layout l;
    };
    for (C c : {C{4, 3, false, ACL_FLOAT, TRANSPOSED}, C{3, 5, true, ACL_DOUBLE, STRIDED}, C{4, 3, true, ACL_FLOAT, CONTIG},
                C{2, 6, false, ACL_DOUBLE, TRANSPOSED}, C{5, 5, true, ACL_FLOAT, STRIDED}}) {
        int k = std::min(c.m, c.n), uc = c.full ? c.m : k, vc = c.full ? c.n : k;
        std::vector<double> X = values(2 * c.m * c.n, c.t, 91);
        Dev x = make({2, c.m, c.n}, c.t, X, c.l), s = make({2, k}, c.t, {0}, STRIDED), u = make({2, c.m, uc}, c.t, {0});
        Dev v = make({2, c.n, vc}, c.t, {0}, TRANSPOSED);
        RUN(S, aclnnSvd, x.t, c.full, true, s.t, u.t, v.t);
        std::vector<double> Sv = read(s), Uv = read(u), Vv = read(v);
        double tol = c.t == ACL_DOUBLE ? 1e-12 : 1e-5;
        for (int b = 0; b < 2; b++) {
            char what[128];
            snprintf(what, sizeof what, "Svd %s %s [2, %d, %d] fullMatrices %d, matrix %d", dname(c.t), lname(c.l), c.m, c.n,
                     c.full, b);
            check_svd(what, {X.begin() + b * c.m * c.n, X.begin() + (b + 1) * c.m * c.n}, {Sv.begin() + b * k, Sv.begin() + (b + 1) * k},
                      {Uv.begin() + b * c.m * uc, Uv.begin() + (b + 1) * c.m * uc},
                      {Vv.begin() + b * c.n * vc, Vv.begin() + (b + 1) * c.n * vc}, c.m, c.n, uc, vc, tol);
        }
        for (Dev *d : {&x, &s, &u, &v}) release(*d);
    }
    /* the reference's example: [[1, 2, 3], [4, 5, 6]], full: sigma = 9.508032, 0.772870 */
    Dev e = make({2, 3}, ACL_FLOAT, {1, 2, 3, 4, 5, 6}), es = make({2}, ACL_FLOAT, {0}), eu = make({2, 2}, ACL_FLOAT, {0});
    Dev ev = make({3, 3}, ACL_FLOAT, {0});
    RUN(S, aclnnSvd, e.t, true, true, es.t, eu.t, ev.t);
    compare("Svd the reference's example: sigma", read(es), {9.508032, 0.772870}, 1e-6);
    /* computeUV false: sigma only, u and v not checked (empty here) */
    Dev u0 = make({0}, ACL_FLOAT, {0}), v0 = make({0}, ACL_FLOAT, {0}), s2 = make({2}, ACL_FLOAT, {0});
    RUN(S, aclnnSvd, e.t, false, false, s2.t, u0.t, v0.t);
    compare("Svd computeUV false: sigma", read(s2), read(es), 0);
    /* a rank-deficient matrix: the zero singular value's vectors still complete the bases */
    std::vector<double> R = {1, 2, 2, 4, 3, 6};
    Dev r = make({3, 2}, ACL_DOUBLE, R), rs = make({2}, ACL_DOUBLE, {0}), ru = make({3, 3}, ACL_DOUBLE, {0}), rv = make({2, 2}, ACL_DOUBLE, {0});
    RUN(S, aclnnSvd, r.t, true, true, rs.t, ru.t, rv.t);
    check_svd("Svd rank-1 double [3, 2] full", R, read(rs), read(ru), read(rv), 3, 2, 3, 2, 1e-12);
    /* errors */
    Dev xi = make({2, 3}, ACL_INT32, {1}), x1 = make({3}, ACL_FLOAT, {1}), xe = make({0, 3}, ACL_FLOAT, {0});
    Dev s3 = make({3}, ACL_FLOAT, {0}), sd = make({2}, ACL_DOUBLE, {0}), u33 = make({3, 3}, ACL_FLOAT, {0});
    expect_code("Svd null sigma", aclnnSvdGetWorkspaceSize(e.t, true, true, nullptr, eu.t, ev.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Svd null v", aclnnSvdGetWorkspaceSize(e.t, true, true, es.t, eu.t, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Svd int32 input", aclnnSvdGetWorkspaceSize(xi.t, true, true, es.t, eu.t, ev.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Svd 1-D input", aclnnSvdGetWorkspaceSize(x1.t, true, true, es.t, eu.t, ev.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Svd empty input", aclnnSvdGetWorkspaceSize(xe.t, true, true, es.t, eu.t, ev.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Svd sigma [3] for k 2", aclnnSvdGetWorkspaceSize(e.t, true, true, s3.t, eu.t, ev.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Svd double sigma of a float input", aclnnSvdGetWorkspaceSize(e.t, true, true, sd.t, eu.t, ev.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Svd u [3, 3] for fullMatrices on [2, 3]", aclnnSvdGetWorkspaceSize(e.t, true, true, es.t, u33.t, ev.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Svd reduced v [3, 3] for [2, 3]", aclnnSvdGetWorkspaceSize(e.t, false, true, es.t, eu.t, ev.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&e, &es, &eu, &ev, &u0, &v0, &s2, &r, &rs, &ru, &rv, &xi, &x1, &xe, &s3, &sd, &u33}) release(*d);
    printf("ok svd\n");
}

/* ---- GatherNd ---- */

static void gather_nd() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* the reference's example 1: [[0, 1], [2, 3]] at (0, 0), (1, 1) */
    Dev e = make({2, 2}, ACL_FLOAT, {0, 1, 2, 3}), ei = make({2, 2}, ACL_INT64, {0, 0, 1, 1}), eo = make({2}, ACL_FLOAT, {9});
    RUN(S, aclnnGatherNd, e.t, ei.t, false, eo.t);
    compare("GatherNd the reference's example 1", read(eo), {0, 3}, 0);
    /* slices: transposed int32 [3, 4] by rows {2, 0, 1} (indices [3, 1]) -> [3, 4]; float16 [2, 3, 2]
     * by pairs [2, 2, 2] -> [2, 2, 2]; negative indices with negativeIndexSupport */
    std::vector<double> X = values(12, ACL_INT32, 101);
    Dev x = make({3, 4}, ACL_INT32, X, TRANSPOSED), xi = make({3, 1}, ACL_INT32, {2, 0, 1}, STRIDED), xo = make({3, 4}, ACL_INT32, {0});
    RUN(S, aclnnGatherNd, x.t, xi.t, false, xo.t);
    std::vector<double> want;
    for (int r : {2, 0, 1})
        for (int c = 0; c < 4; c++) want.push_back(X[r * 4 + c]);
    compare("GatherNd transposed int32 [3, 4] rows {2, 0, 1}", read(xo), want, 0);
    std::vector<double> Y = values(12, ACL_FLOAT16, 102), YI = {1, 2, 0, 0, -1, -3, 0, 1};
    Dev y = make({2, 3, 2}, ACL_FLOAT16, Y, STRIDED), yi = make({2, 2, 2}, ACL_INT64, YI), yo = make({2, 2, 2}, ACL_FLOAT16, {0});
    RUN(S, aclnnGatherNd, y.t, yi.t, true, yo.t);
    std::vector<double> wy;
    for (int t = 0; t < 4; t++) {
        int a0 = static_cast<int>(YI[t * 2]), a1 = static_cast<int>(YI[t * 2 + 1]);
        if (a0 < 0) a0 += 2;
        if (a1 < 0) a1 += 3;
        for (int k = 0; k < 2; k++) wy.push_back(Y[(a0 * 3 + a1) * 2 + k]);
    }
    compare("GatherNd float16 [2, 3, 2] by negative pairs", read(yo), wy, 0);
    /* a negative index without negativeIndexSupport fails the task */
    Dev ni = make({1, 2}, ACL_INT64, {0, -1}), no = make({1}, ACL_FLOAT, {0});
    NN(aclnnGatherNdGetWorkspaceSize(e.t, ni.t, false, no.t, &ws, &ex));
    NN(aclnnGatherNd(nullptr, ws, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL GatherNd negative index without negativeIndexSupport: the task succeeded\n");
        g_fail++;
    } else {
        printf("error GatherNd negative index without negativeIndexSupport (task): %s\n", test_msg());
    }
    /* errors */
    Dev i3 = make({2, 3}, ACL_INT64, {0}), fi = make({2, 2}, ACL_FLOAT, {0}), o3 = make({3}, ACL_FLOAT, {0});
    Dev oh = make({2}, ACL_FLOAT16, {0}), xd = make({2, 2}, ACL_DOUBLE, {0}), od = make({2}, ACL_DOUBLE, {0});
    expect_code("GatherNd null indices", aclnnGatherNdGetWorkspaceSize(e.t, nullptr, false, eo.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GatherNd index tuples of 3 for a 2-D self", aclnnGatherNdGetWorkspaceSize(e.t, i3.t, false, eo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherNd float indices", aclnnGatherNdGetWorkspaceSize(e.t, fi.t, false, eo.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherNd out [3] for [2]", aclnnGatherNdGetWorkspaceSize(e.t, ei.t, false, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherNd float16 out of a float self", aclnnGatherNdGetWorkspaceSize(e.t, ei.t, false, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GatherNd double self", aclnnGatherNdGetWorkspaceSize(xd.t, ei.t, false, od.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&e, &ei, &eo, &x, &xi, &xo, &y, &yi, &yo, &ni, &no, &i3, &fi, &o3, &oh, &xd, &od}) release(*d);
    printf("ok gather nd\n");
}

/* ---- ScatterNd ---- */

static void scatter_nd() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* elements: float [8] with updates at {4, 3, 1, 7} */
    std::vector<double> D = {1, 2, 3, 4, 5, 6, 7, 8};
    Dev d = make({8}, ACL_FLOAT, D, STRIDED), di = make({4, 1}, ACL_INT64, {4, 3, 1, 7}), du = make({4}, ACL_FLOAT, {9, 10, 11, 12});
    Dev dout = make({8}, ACL_FLOAT, {0});
    RUN(S, aclnnScatterNd, d.t, di.t, du.t, dout.t);
    compare("ScatterNd float [8], element updates", read(dout), {1, 11, 3, 10, 9, 6, 7, 12}, 0);
    /* slices: transposed float16 [4, 3] rows {2, 0} from updates [2, 3]; a duplicate row: the later wins */
    std::vector<double> X = values(12, ACL_FLOAT16, 111), U = values(9, ACL_FLOAT16, 112);
    Dev x = make({4, 3}, ACL_FLOAT16, X, TRANSPOSED), xi = make({3, 1}, ACL_INT32, {2, 0, 2}), xu = make({3, 3}, ACL_FLOAT16, U, STRIDED);
    Dev xo = make({4, 3}, ACL_FLOAT16, {0}, STRIDED);
    RUN(S, aclnnScatterNd, x.t, xi.t, xu.t, xo.t);
    std::vector<double> want(X);
    for (int c = 0; c < 3; c++) want[0 * 3 + c] = U[1 * 3 + c], want[2 * 3 + c] = U[2 * 3 + c];
    compare("ScatterNd transposed float16 [4, 3], rows {2, 0, 2} (the later duplicate wins)", read(xo), want, 0);
    /* bool [2, 2, 2] by pairs, in place (out is data) */
    std::vector<double> B = {0, 0, 0, 0, 0, 0, 0, 0};
    Dev b = make({2, 2, 2}, ACL_BOOL, B), bi = make({2, 2}, ACL_INT32, {1, 0, 0, 1}), bu = make({2, 2}, ACL_BOOL, {1, 0, 1, 1});
    RUN(S, aclnnScatterNd, b.t, bi.t, bu.t, b.t);
    compare("ScatterNd bool [2, 2, 2] in place by pairs", read(b), {0, 0, 1, 1, 1, 0, 0, 0}, 0);
    /* an out-of-range index fails the task */
    Dev bad = make({1, 1}, ACL_INT64, {8}), bu1 = make({1}, ACL_FLOAT, {1});
    NN(aclnnScatterNdGetWorkspaceSize(d.t, bad.t, bu1.t, dout.t, &ws, &ex));
    NN(aclnnScatterNd(nullptr, ws, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL ScatterNd index 8 of [8]: the task succeeded\n");
        g_fail++;
    } else {
        printf("error ScatterNd index 8 of [8] (task): %s\n", test_msg());
    }
    /* errors */
    Dev di32 = make({8}, ACL_INT32, {0}), u3 = make({3}, ACL_FLOAT, {0}), i2 = make({4, 2}, ACL_INT64, {0}), oh = make({8}, ACL_FLOAT16, {0});
    Dev fi = make({4, 1}, ACL_FLOAT, {0});
    expect_code("ScatterNd null updates", aclnnScatterNdGetWorkspaceSize(d.t, di.t, nullptr, dout.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ScatterNd int32 data", aclnnScatterNdGetWorkspaceSize(di32.t, di.t, du.t, di32.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterNd updates [3] for 4 index tuples", aclnnScatterNdGetWorkspaceSize(d.t, di.t, u3.t, dout.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterNd index tuples of 2 for a 1-D data", aclnnScatterNdGetWorkspaceSize(d.t, i2.t, du.t, dout.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterNd float16 out of float data", aclnnScatterNdGetWorkspaceSize(d.t, di.t, du.t, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterNd float indices", aclnnScatterNdGetWorkspaceSize(d.t, fi.t, du.t, dout.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *v : {&d, &di, &du, &dout, &x, &xi, &xu, &xo, &b, &bi, &bu, &bad, &bu1, &di32, &u3, &i2, &oh, &fi}) release(*v);
    printf("ok scatter nd\n");
}

/* ---- Bucketize ---- */

static void bucketize() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* the reference's example: {-5, 10000, 150, 10, 5, 100} in {0, 10, 100}; PyTorch's results */
    Dev x = make({3, 2}, ACL_FLOAT, {-5, 10000, 150, 10, 5, 100}, TRANSPOSED), b = make({3}, ACL_FLOAT, {0, 10, 100});
    Dev o = make({3, 2}, ACL_INT64, {9}), o32 = make({3, 2}, ACL_INT32, {9}, STRIDED);
    RUN(S, aclnnBucketize, x.t, b.t, false, false, o.t);
    compare("Bucketize the reference's example, right false (b[i-1] < x <= b[i])", read(o), {0, 3, 3, 1, 1, 2}, 0);
    RUN(S, aclnnBucketize, x.t, b.t, true, true, o32.t);
    compare("Bucketize the reference's example, right true, int32 out", read(o32), {0, 3, 3, 2, 1, 3}, 0);
    /* int32 values in float16 boundaries (compared as float), int64 in int8 boundaries */
    Dev xi = make({5}, ACL_INT32, {-1, 0, 1, 2, 7}, STRIDED), bh = make({3}, ACL_FLOAT16, {0, 1.5, 2}), oi = make({5}, ACL_INT64, {0});
    RUN(S, aclnnBucketize, xi.t, bh.t, false, false, oi.t);
    compare("Bucketize int32 in float16 boundaries", read(oi), {0, 0, 1, 2, 3}, 0);
    Dev xl = make({4}, ACL_INT64, {-100, 3, 4, 100}), b8 = make({2}, ACL_INT8, {3, 50}), ol = make({4}, ACL_INT64, {0});
    RUN(S, aclnnBucketize, xl.t, b8.t, false, true, ol.t);
    compare("Bucketize int64 in int8 boundaries, right true", read(ol), {0, 1, 1, 2}, 0);
    /* errors */
    Dev b2 = make({2, 2}, ACL_FLOAT, {0}), xd = make({3, 2}, ACL_DOUBLE, {0}), o4 = make({4}, ACL_INT64, {0});
    expect_code("Bucketize null boundaries", aclnnBucketizeGetWorkspaceSize(x.t, nullptr, false, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Bucketize 2-D boundaries", aclnnBucketizeGetWorkspaceSize(x.t, b2.t, false, false, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Bucketize int64 out with outInt32", aclnnBucketizeGetWorkspaceSize(x.t, b.t, true, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Bucketize double self", aclnnBucketizeGetWorkspaceSize(xd.t, b.t, false, false, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("Bucketize out [4] for [3, 2]", aclnnBucketizeGetWorkspaceSize(x.t, b.t, false, false, o4.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &b, &o, &o32, &xi, &bh, &oi, &xl, &b8, &ol, &b2, &xd, &o4}) release(*d);
    printf("ok bucketize\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    diag();
    signbit();
    gcd();
    isin();
    addr();
    cdist();
    shifts();
    triangular_solve();
    max_unpool();
    svd();
    gather_nd();
    scatter_nd();
    bucketize();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
