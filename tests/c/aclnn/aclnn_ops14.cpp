/* Math operators of the aclnn reference against host references: Diag, DiagFlat, Signbit,
 * Gcd, IsInTensorScalar / IsInScalarTensor, Addr / InplaceAddr, Cdist, LeftShift / LeftShifts /
 * RightShift; each with documented
 * argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: data movement, integer and bool results exactly; Addr float32 to 1e-6
 * relative (PyTorch evaluates in float32), float16 to 1e-3; Cdist float32 to 1e-6 (computed
 * in float64 and rounded once), float16 to 1e-3. Inputs include transposed and strided
 * views and broadcasting. */
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

/* PyTorch's shifts in type t; a negative count shifts by 0 (the reference's rule) */
static double shift_ref(double a, double b, bool left, aclDataType t) {
    int64_t v = static_cast<int64_t>(a), n = static_cast<int64_t>(b);
    int bits = bits_of(t);
    if (n < 0) n = 0;
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
    /* a shift of an int negative value to the right, negative count (shift by 0) */
    Dev n = make({3}, ACL_INT32, {-7, -8, 9}), nc = make({3}, ACL_INT32, {-1, 1, -5}), no = make({3}, ACL_INT32, {0});
    RUN(S, aclnnRightShift, n.t, nc.t, no.t);
    compare("RightShift int32 with negative counts", read(no), {-7, -4, 9}, 0);
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
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
