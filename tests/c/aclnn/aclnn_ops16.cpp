/* Training-path operators against hand-derived values: ScatterReduce / InplaceScatterReduce
 * (every reduce, with and without self, float / float16 / int32, dim 0 and a transposed dim 1),
 * SearchSorteds (a scalar in a 1-D sequence: left / right, sorter, INT32 out), LinalgCholesky
 * (lower / upper, batched, bfloat16), UnfoldGrad (overlapping and gapped windows), LogitGrad
 * (eps < 0: NaN outside [0, 1]; eps >= 0: 0 outside [eps, 1 - eps]), HardswishBackwardV2 (0 at
 * -3, 1 at 3), CdistBackward (p = 0, 1, 2, 3 and infinity as -1) and MultilabelMarginLoss (the
 * torch documentation's example, none / mean / sum), IndexAddV2 (the reference's example in mode 0,
 * where alpha takes no part, and alpha 2 in mode 1 on dim 1), AddRelu / InplaceAddRelu (the
 * reference's example, integer broadcasting, float16 in place); each with its documented argument errors
 * (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: integer and data-movement results exactly; float results to 1e-6 relative
 * (computed in double, rounded once), float16 / bfloat16 to 1e-3. */
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_scatter_reduce.h"
#include "aclnnop/aclnn_searchsorted.h"
#include "aclnnop/aclnn_linalg_cholesky.h"
#include "aclnnop/aclnn_unfold_grad.h"
#include "aclnnop/aclnn_logit_grad.h"
#include "aclnnop/aclnn_hardswish_backward_v2.h"
#include "aclnnop/aclnn_cdist_backward.h"
#include "aclnnop/aclnn_multilabel_margin_loss.h"
#include "aclnnop/aclnn_index_add_v2.h"
#include "aclnnop/aclnn_add_relu.h"

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
static aclScalar *fs(float v) { return aclCreateScalar(&v, ACL_FLOAT); }
static aclScalar *ls(int64_t v) { return aclCreateScalar(&v, ACL_INT64); }

/* ---- ScatterReduce ---- */

static void scatter_reduce() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* self [1, 2, 3, 4], index [0, 0, 2], src [5, 6, 7] along dim 0:
     * position 0 gets 5 and 6, position 2 gets 7, positions 1 and 3 keep self */
    struct C {
        int64_t reduce;
        bool self;
        std::vector<double> want;
    };
    const C cases[] = {
        {0, true, {6, 2, 7, 4}},     {1, true, {12, 2, 10, 4}}, {1, false, {11, 2, 7, 4}},
        {2, true, {30, 2, 21, 4}},   {2, false, {30, 2, 7, 4}}, {3, true, {6, 2, 7, 4}},
        {3, false, {6, 2, 7, 4}},    {4, true, {1, 2, 3, 4}},   {4, false, {5, 2, 7, 4}},
        {5, true, {4, 2, 5, 4}},     {5, false, {5.5, 2, 7, 4}},
    };
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_INT32}) {
        for (const C &c : cases) {
            std::vector<double> want = c.want;
            /* integer mean divides with floor: (5 + 6) / 2 = 5 */
            if (t == ACL_INT32 && c.reduce == 5 && !c.self) want[0] = 5;
            Dev x = make({4}, t, {1, 2, 3, 4}), i = make({3}, ACL_INT64, {0, 0, 2});
            Dev s = make({3}, t, {5, 6, 7}, STRIDED), o = make({4}, t, {-9});
            RUN(S, aclnnScatterReduce, x.t, 0, i.t, s.t, c.reduce, c.self, o.t);
            char what[96];
            snprintf(what, sizeof what, "ScatterReduce %s reduce %lld includeSelf %d", dname(t),
                     static_cast<long long>(c.reduce), c.self ? 1 : 0);
            compare(what, read(o), want, 0);
            snprintf(what, sizeof what, "InplaceScatterReduce %s reduce %lld includeSelf %d", dname(t),
                     static_cast<long long>(c.reduce), c.self ? 1 : 0);
            RUN(S, aclnnInplaceScatterReduce, x.t, 0, i.t, s.t, c.reduce, c.self);
            compare(what, read(x), want, 0);
            for (Dev *d : {&x, &i, &s, &o}) release(*d);
        }
    }
    /* dim 1 of a transposed [2, 2] self [[1, 2], [3, 4]], int32 index [[1], [0]] (smaller than
     * src [2, 2]), src [[10, 99], [20, 99]]: add with self -> [[1, 12], [23, 4]] */
    Dev x = make({2, 2}, ACL_FLOAT, {1, 2, 3, 4}, TRANSPOSED), i = make({2, 1}, ACL_INT32, {1, 0});
    Dev s = make({2, 2}, ACL_FLOAT, {10, 99, 20, 99}), o = make({2, 2}, ACL_FLOAT, {0}, STRIDED);
    RUN(S, aclnnScatterReduce, x.t, -1, i.t, s.t, 1, true, o.t);
    compare("ScatterReduce transposed self, dim -1, index smaller than src", read(o), {1, 12, 23, 4}, 0);
    /* errors */
    Dev sh = make({2, 2}, ACL_FLOAT16, {0}), i1 = make({2}, ACL_INT64, {0}), o3 = make({3, 2}, ACL_FLOAT, {0});
    Dev fi = make({2, 1}, ACL_FLOAT, {0}), big = make({3, 1}, ACL_INT64, {0});
    expect_code("ScatterReduce null self", aclnnScatterReduceGetWorkspaceSize(nullptr, 0, i.t, s.t, 1, true, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ScatterReduce null out", aclnnScatterReduceGetWorkspaceSize(x.t, 0, i.t, s.t, 1, true, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("InplaceScatterReduce null src", aclnnInplaceScatterReduceGetWorkspaceSize(x.t, 0, i.t, nullptr, 1, true, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ScatterReduce float16 src of a float self",
                aclnnScatterReduceGetWorkspaceSize(x.t, 0, i.t, sh.t, 1, true, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterReduce 1-D index of a 2-D self",
                aclnnScatterReduceGetWorkspaceSize(x.t, 0, i1.t, s.t, 1, true, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterReduce float index", aclnnScatterReduceGetWorkspaceSize(x.t, 0, fi.t, s.t, 1, true, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterReduce reduce 6", aclnnScatterReduceGetWorkspaceSize(x.t, 0, i.t, s.t, 6, true, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterReduce dim 2 of a 2-D self", aclnnScatterReduceGetWorkspaceSize(x.t, 2, i.t, s.t, 1, true, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterReduce out [3, 2] of a [2, 2] self",
                aclnnScatterReduceGetWorkspaceSize(x.t, 0, i.t, s.t, 1, true, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ScatterReduce index [3, 1] larger than src [2, 2]",
                aclnnScatterReduceGetWorkspaceSize(x.t, 1, big.t, s.t, 1, true, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &i, &s, &o, &sh, &i1, &o3, &fi, &big}) release(*d);
    printf("ok scatter reduce\n");
}

/* ---- SearchSorteds ---- */

static void searchsorteds() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev q = make({5}, ACL_FLOAT, {1, 2, 2, 3.5, 7}, STRIDED);
    struct C {
        float v;
        bool right;
        double want;
    };
    for (C c : {C{2, false, 1}, C{2, true, 3}, C{0, false, 0}, C{9, true, 5}, C{3.5f, false, 3}, C{3.5f, true, 4}}) {
        aclScalar *v = fs(c.v);
        Dev o = make({}, ACL_INT64, {-1});
        RUN(S, aclnnSearchSorteds, q.t, v, false, c.right, nullptr, o.t);
        char what[96];
        snprintf(what, sizeof what, "SearchSorteds %g in [1, 2, 2, 3.5, 7], right %d", c.v, c.right ? 1 : 0);
        compare(what, read(o), {c.want}, 0);
        aclDestroyScalar(v);
        release(o);
    }
    /* INT32 out, an int64 scalar in an int32 sequence */
    Dev qi = make({4}, ACL_INT32, {1, 3, 4, 9}), o32 = make({}, ACL_INT32, {-1});
    aclScalar *four = ls(4);
    RUN(S, aclnnSearchSorteds, qi.t, four, true, false, nullptr, o32.t);
    compare("SearchSorteds int64 4 in int32 [1, 3, 4, 9], INT32 out", read(o32), {2}, 0);
    /* sorter: [7, 1, 3.5, 2] in the order [1, 3, 2, 0] is [1, 2, 3.5, 7]; 3 goes at 2 */
    Dev qu = make({4}, ACL_FLOAT, {7, 1, 3.5, 2}), so = make({4}, ACL_INT64, {1, 3, 2, 0}), os = make({}, ACL_INT64, {-1});
    aclScalar *three = fs(3);
    RUN(S, aclnnSearchSorteds, qu.t, three, false, false, so.t, os.t);
    compare("SearchSorteds 3 in [7, 1, 3.5, 2] with sorter [1, 3, 2, 0]", read(os), {2}, 0);
    /* errors */
    Dev q2 = make({2, 2}, ACL_FLOAT, {0}), o2 = make({2}, ACL_INT64, {0}), s32 = make({4}, ACL_INT32, {0});
    expect_code("SearchSorteds null sortedSequence",
                aclnnSearchSortedsGetWorkspaceSize(nullptr, three, false, false, nullptr, os.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SearchSorteds null self", aclnnSearchSortedsGetWorkspaceSize(q.t, nullptr, false, false, nullptr, os.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SearchSorteds null out", aclnnSearchSortedsGetWorkspaceSize(q.t, three, false, false, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("SearchSorteds 2-D sortedSequence", aclnnSearchSortedsGetWorkspaceSize(q2.t, three, false, false, nullptr, os.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("SearchSorteds INT64 out with outInt32", aclnnSearchSortedsGetWorkspaceSize(q.t, three, true, false, nullptr, os.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("SearchSorteds out [2]", aclnnSearchSortedsGetWorkspaceSize(q.t, three, false, false, nullptr, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("SearchSorteds INT32 sorter", aclnnSearchSortedsGetWorkspaceSize(qu.t, three, false, false, s32.t, os.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyScalar(four);
    aclDestroyScalar(three);
    for (Dev *d : {&q, &qi, &o32, &qu, &so, &os, &q2, &o2, &s32}) release(*d);
    printf("ok searchsorteds\n");
}

/* ---- LinalgCholesky ---- */

static void cholesky() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* batch of [[4, 2], [2, 5]] (L = [[2, 0], [1, 2]]) and a transposed view of the same */
    Dev a = make({2, 2, 2}, ACL_FLOAT, {4, 2, 2, 5}), o = make({2, 2, 2}, ACL_FLOAT, {9});
    RUN(S, aclnnLinalgCholesky, a.t, false, o.t);
    compare("LinalgCholesky lower, batch of 2", read(o), {2, 0, 1, 2, 2, 0, 1, 2}, 1e-6);
    RUN(S, aclnnLinalgCholesky, a.t, true, o.t);
    compare("LinalgCholesky upper, batch of 2", read(o), {2, 1, 0, 2, 2, 1, 0, 2}, 1e-6);
    /* [[4, 12, -16], [12, 37, -43], [-16, -43, 98]] = L Lt, L = [[2, 0, 0], [6, 1, 0], [-8, 5, 3]];
     * only the triangle asked for is read: the other holds garbage */
    Dev b = make({3, 3}, ACL_FLOAT, {4, 1e9, -1e9, 12, 37, 5e8, -16, -43, 98}), bo = make({3, 3}, ACL_FLOAT, {9}, STRIDED);
    RUN(S, aclnnLinalgCholesky, b.t, false, bo.t);
    compare("LinalgCholesky lower 3x3 reading the lower triangle", read(bo), {2, 0, 0, 6, 1, 0, -8, 5, 3}, 1e-6);
    Dev u = make({3, 3}, ACL_FLOAT, {4, 12, -16, 7e8, 37, -43, 1, 2, 98}), uo = make({3, 3}, ACL_FLOAT, {9});
    RUN(S, aclnnLinalgCholesky, u.t, true, uo.t);
    compare("LinalgCholesky upper 3x3 reading the upper triangle", read(uo), {2, 6, -8, 0, 1, 5, 0, 0, 3}, 1e-6);
    Dev h = make({2, 2}, ACL_BF16, {4, 2, 2, 5}), ho = make({2, 2}, ACL_BF16, {0});
    RUN(S, aclnnLinalgCholesky, h.t, false, ho.t);
    compare("LinalgCholesky bfloat16", read(ho), {2, 0, 1, 2}, 1e-3);
    /* errors */
    Dev v1 = make({4}, ACL_FLOAT, {1}), ns = make({2, 3}, ACL_FLOAT, {1}), f16 = make({2, 2}, ACL_FLOAT16, {1});
    Dev od = make({2, 2, 2}, ACL_BF16, {0}), o3 = make({3, 2, 2}, ACL_FLOAT, {0});
    expect_code("LinalgCholesky null self", aclnnLinalgCholeskyGetWorkspaceSize(nullptr, false, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LinalgCholesky null out", aclnnLinalgCholeskyGetWorkspaceSize(a.t, false, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LinalgCholesky 1-D self", aclnnLinalgCholeskyGetWorkspaceSize(v1.t, false, v1.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgCholesky [2, 3] self", aclnnLinalgCholeskyGetWorkspaceSize(ns.t, false, ns.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgCholesky float16 self", aclnnLinalgCholeskyGetWorkspaceSize(f16.t, false, f16.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgCholesky bfloat16 out of a float self", aclnnLinalgCholeskyGetWorkspaceSize(a.t, false, od.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("LinalgCholesky out [3, 2, 2]", aclnnLinalgCholeskyGetWorkspaceSize(a.t, false, o3.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&a, &o, &b, &bo, &u, &uo, &h, &ho, &v1, &ns, &f16, &od, &o3}) release(*d);
    printf("ok cholesky\n");
}

/* ---- UnfoldGrad ---- */

static void unfold_grad() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* [5] unfolded (0, 2, 1): windows [0, 1] [1, 2] [2, 3] [3, 4]; a gradient of ones sums to
     * [1, 2, 2, 2, 1] */
    aclIntArray *s5 = ia({5});
    Dev g = make({4, 2}, ACL_FLOAT, {1}, TRANSPOSED), o = make({5}, ACL_FLOAT, {9});
    RUN(S, aclnnUnfoldGrad, g.t, s5, 0, 2, 1, o.t);
    compare("UnfoldGrad [5] size 2 step 1", read(o), {1, 2, 2, 2, 1}, 0);
    /* [2, 5] unfolded (1, 2, 2): windows [0, 1] [2, 3]; element 4 is in none */
    aclIntArray *s25 = ia({2, 5});
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        Dev g2 = make({2, 2, 2}, t, {1, 2, 3, 4, 5, 6, 7, 8}), o2 = make({2, 5}, t, {9}, STRIDED);
        RUN(S, aclnnUnfoldGrad, g2.t, s25, 1, 2, 2, o2.t);
        char what[96];
        snprintf(what, sizeof what, "UnfoldGrad %s [2, 5] size 2 step 2", dname(t));
        compare(what, read(o2), {1, 2, 3, 4, 0, 5, 6, 7, 8, 0}, 0);
        release(g2);
        release(o2);
    }
    /* the reference's example: gradOut [3, 2, 3] holding 1..16 (then 1, 2 again: the example
     * gives 16 values for 18 elements, and the host tensor repeats them here), inputSizes [8, 2],
     * dim 0, size 3, step 2: rows 0-2, 2-4, 4-6; row 7 is in no window */
    aclIntArray *s82 = ia({8, 2});
    Dev ge = make({3, 2, 3}, ACL_FLOAT, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1, 2}), oe = make({8, 2}, ACL_FLOAT, {9});
    RUN(S, aclnnUnfoldGrad, ge.t, s82, 0, 3, 2, oe.t);
    /* window w, column c, offset k is element (w * 2 + c) * 3 + k, added to row 2w + k */
    compare("UnfoldGrad the reference's [3, 2, 3] into [8, 2]", read(oe),
            {1, 4, 2, 5, 3 + 7, 6 + 10, 8, 11, 9 + 13, 12 + 16, 14, 1, 15, 2, 0, 0}, 0);
    aclDestroyIntArray(s82);
    release(ge);
    release(oe);
    /* errors */
    Dev g3 = make({3, 2}, ACL_FLOAT, {1}), gi = make({4, 2}, ACL_INT32, {1}), oh = make({5}, ACL_FLOAT16, {0});
    expect_code("UnfoldGrad null gradOut", aclnnUnfoldGradGetWorkspaceSize(nullptr, s5, 0, 2, 1, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UnfoldGrad null inputSizes", aclnnUnfoldGradGetWorkspaceSize(g.t, nullptr, 0, 2, 1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UnfoldGrad null gradIn", aclnnUnfoldGradGetWorkspaceSize(g.t, s5, 0, 2, 1, nullptr, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    /* the shape, dim, size and step rules are the tiling's: 561002 (ACLNN_ERR_INNER_TILING_ERROR) */
    expect_code("UnfoldGrad gradOut [3, 2] for 4 windows", aclnnUnfoldGradGetWorkspaceSize(g3.t, s5, 0, 2, 1, o.t, &ws, &ex), 561002);
    Dev gd = make({4, 2}, ACL_DOUBLE, {1});
    expect_code("UnfoldGrad double gradOut", aclnnUnfoldGradGetWorkspaceSize(gd.t, s5, 0, 2, 1, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    release(gd);
    expect_code("UnfoldGrad int32 gradOut", aclnnUnfoldGradGetWorkspaceSize(gi.t, s5, 0, 2, 1, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("UnfoldGrad float16 gradIn of float gradOut", aclnnUnfoldGradGetWorkspaceSize(g.t, s5, 0, 2, 1, oh.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UnfoldGrad step 0", aclnnUnfoldGradGetWorkspaceSize(g.t, s5, 0, 2, 0, o.t, &ws, &ex), 561002);
    expect_code("UnfoldGrad size 101", aclnnUnfoldGradGetWorkspaceSize(g.t, s5, 0, 101, 1, o.t, &ws, &ex), 561002);
    expect_code("UnfoldGrad dim 1 of 1-D input", aclnnUnfoldGradGetWorkspaceSize(g.t, s5, 1, 2, 1, o.t, &ws, &ex), 561002);
    expect_code("UnfoldGrad dim -1", aclnnUnfoldGradGetWorkspaceSize(g.t, s5, -1, 2, 1, o.t, &ws, &ex), 561002);
    aclDestroyIntArray(s5);
    aclDestroyIntArray(s25);
    for (Dev *d : {&g, &o, &g3, &gi, &oh}) release(*d);
    printf("ok unfold grad\n");
}

/* ---- LogitGrad, HardswishBackwardV2 ---- */

static void elementwise_grads() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* dy / (x (1 - x)): 1 / 0.1875, 2 / 0.25, 3 / 0.09; x = -0.1 and 1.5 lie outside [0, 1] */
    Dev x = make({5}, ACL_FLOAT, {0.25, 0.5, 0.9, -0.1, 1.5}), dy = make({5}, ACL_FLOAT, {1, 2, 3, 1, 1}, STRIDED);
    Dev o = make({5}, ACL_FLOAT, {7});
    RUN(S, aclnnLogitGrad, x.t, dy.t, -1.0, o.t);
    compare("LogitGrad eps -1", read(o), {1 / 0.1875, 8, 3 / 0.09, NAN, NAN}, 1e-6);
    RUN(S, aclnnLogitGrad, x.t, dy.t, 0.2, o.t);
    compare("LogitGrad eps 0.2 (0 outside [0.2, 0.8])", read(o), {1 / 0.1875, 8, 0, 0, 0}, 1e-6);
    Dev xh = make({5}, ACL_FLOAT16, {0.25, 0.5, 0.9, -0.1, 1.5}), dh = make({5}, ACL_FLOAT16, {1, 2, 3, 1, 1});
    Dev oh = make({5}, ACL_FLOAT16, {7});
    RUN(S, aclnnLogitGrad, xh.t, dh.t, 0.0, oh.t);
    /* float16 0.9 is 0.89990234375 */
    double x9 = as_type(0.9, ACL_FLOAT16);
    compare("LogitGrad float16 eps 0", read(oh), {1 / 0.1875, 8, 3 / (x9 * (1 - x9)), 0, 0}, 1e-3);
    Dev xi = make({5}, ACL_INT32, {0}), o4 = make({4}, ACL_FLOAT, {0});
    expect_code("LogitGrad null x", aclnnLogitGradGetWorkspaceSize(nullptr, dy.t, -1.0, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LogitGrad null dy", aclnnLogitGradGetWorkspaceSize(x.t, nullptr, -1.0, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("LogitGrad int32 x", aclnnLogitGradGetWorkspaceSize(xi.t, xi.t, -1.0, xi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LogitGrad float16 dy of float x", aclnnLogitGradGetWorkspaceSize(x.t, dh.t, -1.0, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("LogitGrad out [4]", aclnnLogitGradGetWorkspaceSize(x.t, dy.t, -1.0, o4.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    /* HardswishBackwardV2, g = 2: 0 at x <= -3, 2 (x / 3 + 0.5) inside, 2 at x >= 3 */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        Dev g = make({2, 4}, t, {2}), hx = make({2, 4}, t, {-4, -3, -1.5, 0, 1.5, 2.999, 3, 5}, TRANSPOSED);
        Dev ho = make({2, 4}, t, {7});
        RUN(S, aclnnHardswishBackwardV2, g.t, hx.t, ho.t);
        /* 2.999 is 3 in bfloat16 */
        double near3 = as_type(2.999, t), gnear = near3 >= 3 ? 2 : as_type(2 * (near3 / 3 + 0.5), t);
        char what[96];
        snprintf(what, sizeof what, "HardswishBackwardV2 %s", dname(t));
        compare(what, read(ho), {0, 0, 0, 1, 2, gnear, 2, 2}, t == ACL_FLOAT ? 1e-6 : 1e-2);
        release(g);
        release(hx);
        release(ho);
    }
    Dev g = make({5}, ACL_FLOAT, {1});
    expect_code("HardswishBackwardV2 null gradOutput", aclnnHardswishBackwardV2GetWorkspaceSize(nullptr, x.t, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("HardswishBackwardV2 null out", aclnnHardswishBackwardV2GetWorkspaceSize(g.t, x.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("HardswishBackwardV2 int32", aclnnHardswishBackwardV2GetWorkspaceSize(xi.t, xi.t, xi.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("HardswishBackwardV2 float16 self of float gradOutput",
                aclnnHardswishBackwardV2GetWorkspaceSize(g.t, xh.t, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("HardswishBackwardV2 out [4]", aclnnHardswishBackwardV2GetWorkspaceSize(g.t, x.t, o4.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &dy, &o, &xh, &dh, &oh, &xi, &o4, &g}) release(*d);
    printf("ok elementwise grads\n");
}

/* ---- CdistBackward ---- */

static void cdist_backward() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* x1 = [[1, 2]], x2 = [[0, 0], [1, 0]], grad ones: differences d1 = (1, 2), d2 = (0, 2) */
    struct C {
        float p;
        double dist1, dist2;
        std::vector<double> want;
    };
    const double r5 = std::sqrt(5.0), c9 = std::cbrt(9.0);
    const C cases[] = {
        {2, r5, 2, {1 / r5, 2 / r5 + 1}},
        {1, 3, 2, {1, 2}},
        {-1, 2, 2, {0, 2}},                       /* infinity: sign(d) where |d| = dist */
        {3, c9, 2, {1 / (c9 * c9), 4 / (c9 * c9) + 1}}, /* d |d| / dist^2 */
        {0, 2, 2, {0, 0}},
    };
    for (const C &c : cases) {
        Dev g = make({1, 2}, ACL_FLOAT, {1}), a = make({1, 2}, ACL_FLOAT, {1, 2}), b = make({2, 2}, ACL_FLOAT, {0, 0, 1, 0}, TRANSPOSED);
        Dev d = make({1, 2}, ACL_FLOAT, {c.dist1, c.dist2}), o = make({1, 2}, ACL_FLOAT, {9});
        RUN(S, aclnnCdistBackward, g.t, a.t, b.t, d.t, c.p, o.t);
        char what[96];
        snprintf(what, sizeof what, "CdistBackward p %g", c.p);
        compare(what, read(o), c.want, 1e-6);
        for (Dev *v : {&g, &a, &b, &d, &o}) release(*v);
    }
    /* batched float16: two batches, the second with grad 2 and a zero distance (no contribution) */
    Dev g = make({2, 1, 2}, ACL_FLOAT16, {1, 1, 2, 2}), a = make({2, 1, 2}, ACL_FLOAT16, {1, 2, 0, 0});
    Dev b = make({2, 2, 2}, ACL_FLOAT16, {0, 0, 1, 0, 0, 0, 3, 4}), d = make({2, 1, 2}, ACL_FLOAT16, {as_type(r5, ACL_FLOAT16), 2, 0, 5});
    Dev o = make({2, 1, 2}, ACL_FLOAT16, {9});
    RUN(S, aclnnCdistBackward, g.t, a.t, b.t, d.t, 2.0f, o.t);
    double rh = as_type(r5, ACL_FLOAT16);
    compare("CdistBackward float16 batched p 2", read(o), {1 / rh, 2 / rh + 1, 2 * -3 / 5.0, 2 * -4 / 5.0}, 1e-3);
    /* errors */
    Dev a3 = make({2, 1, 3}, ACL_FLOAT16, {0}), gf = make({2, 1, 2}, ACL_FLOAT, {0}), bd = make({2, 2}, ACL_DOUBLE, {0});
    expect_code("CdistBackward null grad", aclnnCdistBackwardGetWorkspaceSize(nullptr, a.t, b.t, d.t, 2.0f, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CdistBackward null cdist", aclnnCdistBackwardGetWorkspaceSize(g.t, a.t, b.t, nullptr, 2.0f, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CdistBackward p -2", aclnnCdistBackwardGetWorkspaceSize(g.t, a.t, b.t, d.t, -2.0f, o.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("CdistBackward float grad of float16 x1", aclnnCdistBackwardGetWorkspaceSize(gf.t, a.t, b.t, d.t, 2.0f, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CdistBackward x1 with 3 columns, x2 with 2", aclnnCdistBackwardGetWorkspaceSize(g.t, a3.t, b.t, d.t, 2.0f, a3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CdistBackward double tensors", aclnnCdistBackwardGetWorkspaceSize(bd.t, bd.t, bd.t, bd.t, 2.0f, bd.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *v : {&g, &a, &b, &d, &o, &a3, &gf, &bd}) release(*v);
    printf("ok cdist backward\n");
}

/* ---- MultilabelMarginLoss ---- */

static void multilabel_margin_loss() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* torch's example: x [[0.1, 0.2, 0.4, 0.8]], y [[3, 0, -1, 1]] (targets 3 and 0):
     * 0.25 * ((1 - (0.1 - 0.2)) + (1 - (0.1 - 0.4)) + (1 - (0.8 - 0.2)) + (1 - (0.8 - 0.4))) = 0.85;
     * a second sample [0.5, 0.5, 0.5, 0.5] with target 2 alone: 0.25 * 3 = 0.75 */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        double tol = t == ACL_FLOAT ? 1e-6 : 1e-3;
        Dev x = make({2, 4}, t, {0.1, 0.2, 0.4, 0.8, 0.5, 0.5, 0.5, 0.5}), y = make({2, 4}, ACL_INT64, {3, 0, -1, 1, 2, -1, 0, 0});
        Dev on = make({2}, t, {9}), os = make({}, t, {9}), it = make({2, 4}, t, {9});
        double a = as_type(0.1, t), b = as_type(0.2, t), c = as_type(0.4, t), d = as_type(0.8, t);
        double l0 = 0.25 * ((1 - (a - b)) + (1 - (a - c)) + (1 - (d - b)) + (1 - (d - c)));
        char what[96];
        RUN(S, aclnnMultilabelMarginLoss, x.t, y.t, 0, on.t, it.t);
        snprintf(what, sizeof what, "MultilabelMarginLoss %s none", dname(t));
        compare(what, read(on), {l0, 0.75}, tol);
        snprintf(what, sizeof what, "MultilabelMarginLoss %s isTarget", dname(t));
        compare(what, read(it), {1, 0, 0, 1, 0, 0, 1, 0}, 0);
        RUN(S, aclnnMultilabelMarginLoss, x.t, y.t, 1, os.t, it.t);
        snprintf(what, sizeof what, "MultilabelMarginLoss %s mean", dname(t));
        compare(what, read(os), {(l0 + 0.75) / 2}, tol);
        RUN(S, aclnnMultilabelMarginLoss, x.t, y.t, 2, os.t, it.t);
        snprintf(what, sizeof what, "MultilabelMarginLoss %s sum", dname(t));
        compare(what, read(os), {l0 + 0.75}, tol);
        for (Dev *v : {&x, &y, &on, &os, &it}) release(*v);
    }
    /* a 1-D input with reduction none gives a 0-d loss */
    Dev x1 = make({4}, ACL_FLOAT, {0.1, 0.2, 0.4, 0.8}), y1 = make({4}, ACL_INT32, {3, 0, -1, 1});
    Dev o1 = make({}, ACL_FLOAT, {9}), i1 = make({4}, ACL_FLOAT, {9});
    RUN(S, aclnnMultilabelMarginLoss, x1.t, y1.t, 0, o1.t, i1.t);
    compare("MultilabelMarginLoss 1-D none", read(o1), {0.85}, 1e-6);
    /* errors */
    Dev yf = make({4}, ACL_FLOAT, {0}), y3 = make({3}, ACL_INT64, {0}), o2 = make({2}, ACL_FLOAT, {0}), ih = make({4}, ACL_FLOAT16, {0});
    expect_code("MultilabelMarginLoss null target", aclnnMultilabelMarginLossGetWorkspaceSize(x1.t, nullptr, 1, o1.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MultilabelMarginLoss null isTarget", aclnnMultilabelMarginLossGetWorkspaceSize(x1.t, y1.t, 1, o1.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MultilabelMarginLoss float target", aclnnMultilabelMarginLossGetWorkspaceSize(x1.t, yf.t, 1, o1.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MultilabelMarginLoss target [3] of self [4]", aclnnMultilabelMarginLossGetWorkspaceSize(x1.t, y3.t, 1, o1.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MultilabelMarginLoss reduction 3", aclnnMultilabelMarginLossGetWorkspaceSize(x1.t, y1.t, 3, o1.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MultilabelMarginLoss mean into [2]", aclnnMultilabelMarginLossGetWorkspaceSize(x1.t, y1.t, 1, o2.t, i1.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MultilabelMarginLoss float16 isTarget of float self",
                aclnnMultilabelMarginLossGetWorkspaceSize(x1.t, y1.t, 1, o1.t, ih.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *v : {&x1, &y1, &o1, &i1, &yf, &y3, &o2, &ih}) release(*v);
    printf("ok multilabel margin loss\n");
}

/* ---- IndexAddV2 ---- */

static void index_add_v2() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* the reference's example: self [4, 2] = 0..7, index [0, 1, 2, 3], source [1, 1, 1, 2, 2, 2, 3, 3],
     * mode 0 (alpha takes no part): self + source */
    aclScalar *one = fs(1), *two = fs(2);
    Dev x = make({4, 2}, ACL_FLOAT, {0, 1, 2, 3, 4, 5, 6, 7}), i = make({4}, ACL_INT32, {0, 1, 2, 3});
    Dev s = make({4, 2}, ACL_FLOAT, {1, 1, 1, 2, 2, 2, 3, 3}), o = make({4, 2}, ACL_FLOAT, {0});
    RUN(S, aclnnIndexAddV2, x.t, 0, i.t, s.t, two, 0, o.t);
    compare("IndexAddV2 the reference example, mode 0", read(o), {1, 2, 3, 5, 6, 7, 9, 10}, 0);
    /* mode 1, dim 1 of a transposed int32 [2, 3], index [2, 2] (repeats accumulate), alpha 2 */
    Dev xi = make({2, 3}, ACL_INT32, {1, 2, 3, 4, 5, 6}, TRANSPOSED), ii = make({2}, ACL_INT64, {2, 2});
    Dev si = make({2, 2}, ACL_INT32, {10, 20, 30, 40}), oi = make({2, 3}, ACL_INT32, {0});
    RUN(S, aclnnIndexAddV2, xi.t, 1, ii.t, si.t, two, 1, oi.t);
    compare("IndexAddV2 int32 dim 1, repeated index, alpha 2", read(oi), {1, 2, 63, 4, 5, 146}, 0);
    /* errors */
    Dev x3 = make({2, 2, 2}, ACL_FLOAT, {0}), s3 = make({2, 2, 2}, ACL_FLOAT, {0}), i2 = make({2}, ACL_INT64, {0, 1});
    Dev ih = make({4}, ACL_FLOAT, {0}), sh = make({4, 2}, ACL_FLOAT16, {0}), i22 = make({2, 2}, ACL_INT64, {0});
    expect_code("IndexAddV2 null alpha", aclnnIndexAddV2GetWorkspaceSize(x.t, 0, i.t, s.t, nullptr, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IndexAddV2 null index", aclnnIndexAddV2GetWorkspaceSize(x.t, 0, nullptr, s.t, one, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("IndexAddV2 mode 0 on a 3-D self", aclnnIndexAddV2GetWorkspaceSize(x3.t, 0, i2.t, s3.t, one, 0, x3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexAddV2 mode 0 on dim 1", aclnnIndexAddV2GetWorkspaceSize(x.t, 1, i2.t, s.t, one, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexAddV2 float index", aclnnIndexAddV2GetWorkspaceSize(x.t, 0, ih.t, s.t, one, 1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexAddV2 float16 source of float self", aclnnIndexAddV2GetWorkspaceSize(x.t, 0, i.t, sh.t, one, 1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexAddV2 2-D index", aclnnIndexAddV2GetWorkspaceSize(x.t, 0, i22.t, s.t, one, 1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("IndexAddV2 index of 2 for source [4, 2]", aclnnIndexAddV2GetWorkspaceSize(x.t, 0, i2.t, s.t, one, 1, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyScalar(one);
    aclDestroyScalar(two);
    for (Dev *d : {&x, &i, &s, &o, &xi, &ii, &si, &oi, &x3, &s3, &i2, &ih, &sh, &i22}) release(*d);
    printf("ok index add v2\n");
}

/* ---- AddRelu, InplaceAddRelu ---- */

static void add_relu() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* the reference's example: relu([0..7] + 1.2 [1, 1, 1, 2, 2, 2, 3, 3]), then negative sums */
    aclScalar *a12 = fs(1.2f), *two = ls(2), *one = fs(1);
    Dev x = make({4, 2}, ACL_FLOAT, {0, 1, 2, 3, 4, 5, 6, 7}), y = make({4, 2}, ACL_FLOAT, {1, 1, 1, 2, 2, 2, 3, 3});
    Dev o = make({4, 2}, ACL_FLOAT, {9}, STRIDED);
    RUN(S, aclnnAddRelu, x.t, y.t, a12, o.t);
    const double k = static_cast<double>(1.2f);
    compare("AddRelu the reference example", read(o), {k, 1 + k, 2 + k, 3 + 2 * k, 4 + 2 * k, 5 + 2 * k, 6 + 3 * k, 7 + 3 * k},
            1e-6);
    /* a DOUBLE alpha (torch_npu passes a Python float so) */
    double half = 0.5;
    aclScalar *ad = aclCreateScalar(&half, ACL_DOUBLE);
    RUN(S, aclnnAddRelu, x.t, y.t, ad, o.t);
    compare("AddRelu double alpha 0.5", read(o), {0.5, 1.5, 2.5, 4, 5, 6, 7.5, 8.5}, 1e-6);
    aclDestroyScalar(ad);
    /* int32 [2, 3] + 2 * int32 [3] broadcast: [-5, 3, 2, -9, 0, 1] + 2 [2, -1, -4] */
    Dev xi = make({2, 3}, ACL_INT32, {-5, 3, 2, -9, 0, 1}, TRANSPOSED), yi = make({3}, ACL_INT32, {2, -1, -4});
    Dev oi = make({2, 3}, ACL_INT32, {9});
    RUN(S, aclnnAddRelu, xi.t, yi.t, two, oi.t);
    compare("AddRelu int32 broadcast, alpha 2", read(oi), {0, 1, 0, 0, 0, 0}, 0);
    /* float16 in place: [-1, 0.5, 2, -0.25] + [0.5, -1, 1, 0.25] */
    Dev xh = make({4}, ACL_FLOAT16, {-1, 0.5, 2, -0.25}), yh = make({4}, ACL_FLOAT16, {0.5, -1, 1, 0.25});
    RUN(S, aclnnInplaceAddRelu, xh.t, yh.t, one);
    compare("InplaceAddRelu float16", read(xh), {0, 0, 3, 0}, 0);
    /* errors */
    Dev xd = make({4}, ACL_DOUBLE, {0}), y5 = make({5}, ACL_FLOAT, {0}), ob = make({4, 2}, ACL_BOOL, {0});
    expect_code("AddRelu null alpha", aclnnAddReluGetWorkspaceSize(x.t, y.t, nullptr, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AddRelu null other", aclnnAddReluGetWorkspaceSize(x.t, nullptr, one, o.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("InplaceAddRelu null selfRef", aclnnInplaceAddReluGetWorkspaceSize(nullptr, y.t, one, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AddRelu double self", aclnnAddReluGetWorkspaceSize(xd.t, xd.t, one, xd.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AddRelu [4, 2] and [5] do not broadcast", aclnnAddReluGetWorkspaceSize(x.t, y5.t, one, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AddRelu bool out", aclnnAddReluGetWorkspaceSize(x.t, y.t, one, ob.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("AddRelu float alpha for int32 tensors", aclnnAddReluGetWorkspaceSize(xi.t, yi.t, a12, oi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceAddRelu float other into an int32 selfRef", aclnnInplaceAddReluGetWorkspaceSize(xi.t, x.t, one, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyScalar(a12);
    aclDestroyScalar(two);
    aclDestroyScalar(one);
    for (Dev *d : {&x, &y, &o, &xi, &yi, &oi, &xh, &yh, &xd, &y5, &ob}) release(*d);
    printf("ok add relu\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    scatter_reduce();
    searchsorteds();
    cholesky();
    unfold_grad();
    elementwise_grads();
    cdist_backward();
    multilabel_margin_loss();
    index_add_v2();
    add_relu();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
