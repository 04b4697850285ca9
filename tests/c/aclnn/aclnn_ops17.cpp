/* CtcLoss / CtcLossBackward and EmbeddingBag against hand-derived values, with their
 * documented argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 *
 * CTC: two classes (blank 0, label 1), two time steps with probabilities p0 = (0.6, 0.4) and
 * p1 = (0.3, 0.7). The target "1" is reached by the paths 11, 01 and 10: P = 0.28 + 0.42 +
 * 0.12 = 0.82, loss -ln 0.82. The alpha table and the gradient
 * exp(lp) - (sum of alpha beta over the label's positions) / (P p) follow by hand (below).
 * The target "1 1" needs three steps, so its loss is infinite (0 under zeroInfinity).
 * Tolerances: float 1e-6 relative. */
#include <cmath>
#include <limits>
#include "ops_ref.h"
#include "aclnnop/aclnn_ctc_loss.h"
#include "aclnnop/aclnn_ctc_loss_backward.h"
#include "aclnnop/aclnn_embedding_bag.h"

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

static const double NEG_INF = -std::numeric_limits<double>::infinity();
static const double INF = std::numeric_limits<double>::infinity();

/* ---- CtcLoss, CtcLossBackward ---- */

static void ctc() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const double p0b = 0.6, p0l = 0.4, p1b = 0.3, p1l = 0.7, P = 0.82;
    /* logProbs [T=2, N=2, C=2]: both entries see the same probabilities */
    std::vector<double> lpv = {std::log(p0b), std::log(p0l), std::log(p0b), std::log(p0l),
                               std::log(p1b), std::log(p1l), std::log(p1b), std::log(p1l)};
    for (Layout l : {CONTIG, STRIDED}) {
        for (bool concat : {false, true}) {
            Dev lp = make({2, 2, 2}, ACL_FLOAT, lpv, l);
            /* padded [[1, 0], [1, 1]] or concatenated [1, 1, 1] */
            Dev tg = concat ? make({3}, ACL_INT64, {1, 1, 1}) : make({2, 2}, ACL_INT32, {1, 0, 1, 1}, l);
            int64_t ilv[2] = {2, 2}, tlv[2] = {1, 2};
            aclIntArray *il = aclCreateIntArray(ilv, 2), *tl = aclCreateIntArray(tlv, 2);
            Dev nll = make({2}, ACL_FLOAT, {7}), la = make({2, 2, 8}, ACL_FLOAT, {7});
            RUN(S, aclnnCtcLoss, lp.t, tg.t, il, tl, 0, false, nll.t, la.t);
            char what[128];
            snprintf(what, sizeof what, "CtcLoss %s %s targets: -ln 0.82 and inf", lname(l), concat ? "concatenated" : "padded");
            compare(what, read(nll), {-std::log(P), INF}, 1e-6);
            /* entry 0: t0 (ln .6, ln .4, -inf), t1 (ln .18, ln .7, ln .12); the rest -inf */
            std::vector<double> want(32, NEG_INF);
            want[0] = std::log(0.6);
            want[1] = std::log(0.4);
            want[8] = std::log(0.18);
            want[9] = std::log(0.7);
            want[10] = std::log(0.12);
            /* entry 1 (l' = b 1 b 1 b): t0 (ln .6, ln .4), t1 (ln .18, ln .7, ln .12): the second 1 needs
             * a blank between, so position 3 stays -inf */
            want[16] = std::log(0.6);
            want[17] = std::log(0.4);
            want[24] = std::log(0.18);
            want[25] = std::log(0.7);
            want[26] = std::log(0.12);
            snprintf(what, sizeof what, "CtcLoss %s logAlpha [2, 2, 8]", lname(l));
            compare(what, read(la), want, 1e-6);

            RUN(S, aclnnCtcLoss, lp.t, tg.t, il, tl, 0, true, nll.t, la.t);
            snprintf(what, sizeof what, "CtcLoss %s zeroInfinity", lname(l));
            compare(what, read(nll), {-std::log(P), 0}, 1e-6);

            /* backward, gradOut (2, 3), zeroInfinity: entry 1's gradient is zero */
            Dev g = make({2}, ACL_FLOAT, {2, 3}), o = make({2, 2, 2}, ACL_FLOAT, {7}, l);
            RUN(S, aclnnCtcLossBackward, g.t, lp.t, tg.t, il, tl, nll.t, la.t, 0, true, o.t);
            double g00 = p0b - 0.6 * 0.42 / (P * p0b), g01 = p0l - 0.4 * 0.4 / (P * p0l);
            double g10 = p1b - 0.12 * 0.3 / (P * p1b), g11 = p1l - 0.7 * 0.7 / (P * p1l);
            snprintf(what, sizeof what, "CtcLossBackward %s %s", lname(l), concat ? "concatenated" : "padded");
            compare(what, read(o), {2 * g00, 2 * g01, 0, 0, 2 * g10, 2 * g11, 0, 0}, 1e-6);
            aclDestroyIntArray(il);
            aclDestroyIntArray(tl);
            for (Dev *d : {&lp, &tg, &nll, &la, &g, &o}) release(*d);
        }
    }
    /* blank 1 with label 0, unbatched [T, C] logProbs, double, 0-D loss: mirrored classes give
     * the same numbers */
    {
        Dev lp = make({2, 2}, ACL_DOUBLE, {std::log(p0l), std::log(p0b), std::log(p1l), std::log(p1b)});
        Dev tg = make({1}, ACL_INT64, {0});
        int64_t ilv[1] = {2}, tlv[1] = {1};
        aclIntArray *il = aclCreateIntArray(ilv, 1), *tl = aclCreateIntArray(tlv, 1);
        Dev nll = make({}, ACL_DOUBLE, {7}), la = make({1, 2, 3}, ACL_DOUBLE, {7});
        RUN(S, aclnnCtcLoss, lp.t, tg.t, il, tl, 1, false, nll.t, la.t);
        compare("CtcLoss unbatched double, blank 1", read(nll), {-std::log(P)}, 1e-12);
        Dev g = make({}, ACL_DOUBLE, {1}), o = make({2, 2}, ACL_DOUBLE, {7});
        RUN(S, aclnnCtcLossBackward, g.t, lp.t, tg.t, il, tl, nll.t, la.t, 1, false, o.t);
        double g00 = p0b - 0.6 * 0.42 / (P * p0b), g01 = p0l - 0.4 * 0.4 / (P * p0l);
        double g10 = p1b - 0.12 * 0.3 / (P * p1b), g11 = p1l - 0.7 * 0.7 / (P * p1l);
        compare("CtcLossBackward unbatched double, blank 1", read(o), {g01, g00, g11, g10}, 1e-12);
        aclDestroyIntArray(il);
        aclDestroyIntArray(tl);
        for (Dev *d : {&lp, &tg, &nll, &la, &g, &o}) release(*d);
    }
    /* errors */
    Dev lp = make({2, 2, 2}, ACL_FLOAT, lpv), tg = make({2, 2}, ACL_INT64, {1, 0, 1, 1});
    Dev nll = make({2}, ACL_FLOAT, {0}), la = make({2, 2, 8}, ACL_FLOAT, {0}), la4 = make({2, 2, 4}, ACL_FLOAT, {0});
    Dev lpi = make({2, 2, 2}, ACL_INT32, {0}), nllh = make({2}, ACL_FLOAT16, {0}), nll3 = make({3}, ACL_FLOAT, {0});
    Dev g = make({2}, ACL_FLOAT, {1}), o = make({2, 2, 2}, ACL_FLOAT, {0}), o3 = make({2, 2, 3}, ACL_FLOAT, {0});
    Dev gd = make({2}, ACL_DOUBLE, {1}), tgs = make({2, 1}, ACL_INT64, {1});
    int64_t ilv[2] = {2, 2}, tlv[2] = {1, 2}, il3v[3] = {2, 2, 2}, ilbad[2] = {3, 2};
    aclIntArray *il = aclCreateIntArray(ilv, 2), *tl = aclCreateIntArray(tlv, 2), *il3 = aclCreateIntArray(il3v, 3);
    aclIntArray *ilb = aclCreateIntArray(ilbad, 2);
    expect_code("CtcLoss null logProbs", aclnnCtcLossGetWorkspaceSize(nullptr, tg.t, il, tl, 0, false, nll.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CtcLoss null inputLengths", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, nullptr, tl, 0, false, nll.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CtcLoss null logAlphaOut", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, il, tl, 0, false, nll.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CtcLoss int32 logProbs", aclnnCtcLossGetWorkspaceSize(lpi.t, tg.t, il, tl, 0, false, nll.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLoss float16 negLogLikelihoodOut", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, il, tl, 0, false, nllh.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLoss blank 2 of 2 classes", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, il, tl, 2, false, nll.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLoss logAlpha X 4 < 5", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, il, tl, 0, false, nll.t, la4.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLoss 3 inputLengths for N 2", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, il3, tl, 0, false, nll.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLoss inputLength 3 > T 2", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, ilb, tl, 0, false, nll.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLoss negLogLikelihoodOut [3]", aclnnCtcLossGetWorkspaceSize(lp.t, tg.t, il, tl, 0, false, nll3.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLoss targets [2, 1] shorter than 2", aclnnCtcLossGetWorkspaceSize(lp.t, tgs.t, il, tl, 0, false, nll.t, la.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLossBackward null gradOut",
                aclnnCtcLossBackwardGetWorkspaceSize(nullptr, lp.t, tg.t, il, tl, nll.t, la.t, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CtcLossBackward null out",
                aclnnCtcLossBackwardGetWorkspaceSize(g.t, lp.t, tg.t, il, tl, nll.t, la.t, 0, false, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CtcLossBackward double gradOut",
                aclnnCtcLossBackwardGetWorkspaceSize(gd.t, lp.t, tg.t, il, tl, nll.t, la.t, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLossBackward out [2, 2, 3]",
                aclnnCtcLossBackwardGetWorkspaceSize(g.t, lp.t, tg.t, il, tl, nll.t, la.t, 0, false, o3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CtcLossBackward logAlpha X 4",
                aclnnCtcLossBackwardGetWorkspaceSize(g.t, lp.t, tg.t, il, tl, nll.t, la4.t, 0, false, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(il);
    aclDestroyIntArray(tl);
    aclDestroyIntArray(il3);
    aclDestroyIntArray(ilb);
    for (Dev *d : {&lp, &tg, &nll, &la, &la4, &lpi, &nllh, &nll3, &g, &o, &o3, &gd, &tgs}) release(*d);
    printf("ok ctc loss\n");
}

/* ---- EmbeddingBag ---- */

/* weight rows (1, 2), (3, 4), (5, 6), (7, 8); indices 0 2 | (empty) | 1 3 3 */
static void embedding_bag() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        for (Layout l : {CONTIG, TRANSPOSED}) {
            Dev w = make({4, 2}, t, {1, 2, 3, 4, 5, 6, 7, 8}, l), idx = make({5}, ACL_INT64, {0, 2, 1, 3, 3}, l == CONTIG ? CONTIG : STRIDED);
            Dev off = make({3}, ACL_INT32, {0, 2, 2});
            struct M {
                int64_t mode;
                int64_t pad;
                std::vector<double> out, size, maxi;
            };
            for (const M &m : {M{0, -1, {6, 8, 0, 0, 17, 20}, {2, 0, 3}, {2, 0, 3}},
                               M{1, -1, {3, 4, 0, 0, 17.0 / 3, 20.0 / 3}, {2, 0, 3}, {2, 0, 3}},
                               M{2, -1, {5, 6, 0, 0, 7, 8}, {2, 0, 3}, {2, 2, -1, -1, 3, 3}},
                               M{0, 3, {6, 8, 0, 0, 3, 4}, {2, 0, 1}, {2, 0, 1}},
                               M{1, 3, {3, 4, 0, 0, 3, 4}, {2, 0, 1}, {2, 0, 1}},
                               M{2, 3, {5, 6, 0, 0, 3, 4}, {2, 0, 1}, {2, 2, -1, -1, 1, 1}}}) {
                Dev o = make({3, 2}, t, {9}), o2b = make({5}, ACL_INT64, {9}), bs = make({3}, ACL_INT64, {9});
                Dev mi = m.mode == 2 ? make({3, 2}, ACL_INT64, {9}) : make({3}, ACL_INT64, {9});
                RUN(S, aclnnEmbeddingBag, w.t, idx.t, off.t, false, m.mode, false, nullptr, false, m.pad, o.t, o2b.t, bs.t, mi.t);
                char what[128];
                snprintf(what, sizeof what, "EmbeddingBag %s %s mode %lld paddingIdx %lld", dname(t), lname(l),
                         static_cast<long long>(m.mode), static_cast<long long>(m.pad));
                compare(what, read(o), as(m.out, t), t == ACL_FLOAT ? 1e-6 : 0);
                snprintf(what, sizeof what, "EmbeddingBag %s mode %lld paddingIdx %lld offset2bag, bagSize, maxIndices", dname(t),
                         static_cast<long long>(m.mode), static_cast<long long>(m.pad));
                std::vector<double> aux = read(o2b), b = read(bs), mx = read(mi);
                aux.insert(aux.end(), b.begin(), b.end());
                aux.insert(aux.end(), mx.begin(), mx.end());
                std::vector<double> want = {0, 0, 2, 2, 2};
                want.insert(want.end(), m.size.begin(), m.size.end());
                want.insert(want.end(), m.maxi.begin(), m.maxi.end());
                compare(what, aux, want, 0);
                for (Dev *d : {&o, &o2b, &bs, &mi}) release(*d);
            }
            release(w);
            release(idx);
            release(off);
        }
    }
    /* perSampleWeights (1, .5, 2, -1, 1) with includeLastOffset: offsets 0 2 2 5, an empty
     * offset2bag as torch_npu passes in sum mode */
    Dev w = make({4, 2}, ACL_FLOAT, {1, 2, 3, 4, 5, 6, 7, 8}), idx = make({5}, ACL_INT32, {0, 2, 1, 3, 3});
    Dev off = make({4}, ACL_INT64, {0, 2, 2, 5}), psw = make({5}, ACL_FLOAT, {1, 0.5, 2, -1, 1}, STRIDED);
    Dev o = make({3, 2}, ACL_FLOAT, {9}), o2b = make({0}, ACL_INT64, {}), bs = make({3}, ACL_INT64, {9}), mi = make({3}, ACL_INT64, {9});
    RUN(S, aclnnEmbeddingBag, w.t, idx.t, off.t, false, 0, false, psw.t, true, -1, o.t, o2b.t, bs.t, mi.t);
    compare("EmbeddingBag perSampleWeights, includeLastOffset", read(o), {3.5, 5, 0, 0, 6, 8}, 1e-6);
    compare("EmbeddingBag includeLastOffset bagSize", read(bs), {2, 0, 3}, 0);
    /* errors */
    Dev wi = make({4, 2}, ACL_INT32, {0}), o4 = make({4, 2}, ACL_FLOAT, {0}), i2 = make({5, 1}, ACL_INT64, {0});
    Dev mi3 = make({3}, ACL_INT64, {0}), i8 = make({5}, ACL_INT8, {0}), off8 = make({4}, ACL_UINT8, {0});
    expect_code("EmbeddingBag null weight",
                aclnnEmbeddingBagGetWorkspaceSize(nullptr, idx.t, off.t, false, 0, false, nullptr, true, -1, o.t, o2b.t, bs.t, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("EmbeddingBag null bagSize",
                aclnnEmbeddingBagGetWorkspaceSize(w.t, idx.t, off.t, false, 0, false, nullptr, true, -1, o.t, o2b.t, nullptr, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("EmbeddingBag int32 weight",
                aclnnEmbeddingBagGetWorkspaceSize(wi.t, idx.t, off.t, false, 0, false, nullptr, true, -1, o.t, o2b.t, bs.t, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("EmbeddingBag mode 3",
                aclnnEmbeddingBagGetWorkspaceSize(w.t, idx.t, off.t, false, 3, false, nullptr, true, -1, o.t, o2b.t, bs.t, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("EmbeddingBag output [4, 2] for 3 bags",
                aclnnEmbeddingBagGetWorkspaceSize(w.t, idx.t, off.t, false, 0, false, nullptr, true, -1, o4.t, o2b.t, bs.t, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("EmbeddingBag perSampleWeights in mean mode",
                aclnnEmbeddingBagGetWorkspaceSize(w.t, idx.t, off.t, false, 1, false, psw.t, true, -1, o.t, o2b.t, bs.t, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("EmbeddingBag 2-D indices",
                aclnnEmbeddingBagGetWorkspaceSize(w.t, i2.t, off.t, false, 0, false, nullptr, true, -1, o.t, o2b.t, bs.t, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("EmbeddingBag max mode maxIndices [3]",
                aclnnEmbeddingBagGetWorkspaceSize(w.t, idx.t, off.t, false, 2, false, nullptr, true, -1, o.t, o2b.t, bs.t, mi3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("EmbeddingBag int8 indices and uint8 offsets",
                aclnnEmbeddingBagGetWorkspaceSize(w.t, i8.t, off8.t, false, 0, false, nullptr, true, -1, o.t, o2b.t, bs.t, mi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* an index outside the weight fails the task */
    Dev bad = make({5}, ACL_INT64, {0, 2, 1, 4, 3});
    NN(aclnnEmbeddingBagGetWorkspaceSize(w.t, bad.t, off.t, false, 0, false, nullptr, true, -1, o.t, o2b.t, bs.t, mi.t, &ws, &ex));
    NN(aclnnEmbeddingBag(nullptr, ws, ex, S));
    g_checks++;
    if (aclrtSynchronizeStream(S) == ACL_SUCCESS) {
        printf("FAIL EmbeddingBag index 4 of 4 rows: the task succeeded\n");
        g_fail++;
    } else {
        printf("error EmbeddingBag index 4 of 4 rows (task): %s\n", test_msg());
    }
    for (Dev *d : {&w, &idx, &off, &psw, &o, &o2b, &bs, &mi, &wi, &o4, &i2, &mi3, &i8, &off8, &bad}) release(*d);
    printf("ok embedding bag\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    ctc();
    embedding_bag();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
