/* CtcLoss / CtcLossBackward and EmbeddingBag against hand-derived values, with their
 * documented argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 *
 * CTC: two classes (blank 0, label 1), two time steps with probabilities p0 = (0.6, 0.4) and
 * p1 = (0.3, 0.7). The target "1" is reached by the paths 11, 01 and 10: P = 0.28 + 0.42 +
 * 0.12 = 0.82, loss -ln 0.82. The alpha table and the gradient
 * exp(lp) - (sum of alpha beta over the label's positions) / (P p) follow by hand (below).
 * The target "1 1" needs three steps, so its loss is infinite (0 under zeroInfinity).
 *
 * Upsampling: NearestExact3d [2, 2, 2] -> [3, 3, 3] reads index floor((o + 0.5) 2 / 3) = 0, 1, 1
 * per dimension (with scale 3 given: 0, 0, 0); its gradient counts the reads. The
 * anti-aliased filters on a row (1, 2, 3, 4) -> 2: bilinear (scale 2, support 2) weighs
 * 1 - |d| / 2 at distances d from the centres 1 and 3: (3, 3, 1) / 7 and (1, 3, 3) / 7; with
 * alignCorners the scale is 3 and the centres 1.5 and 4.5 (PyTorch's antialias formula):
 * (2, 3, 2, 1) / 8 and (1, 2) / 3; bicubic (a = -0.5, support 4) weighs the cubic at
 * (-.25, .25, .75, 1.25): (.8671875, .8671875, .2265625, -.0703125) / 1.890625.
 *
 * Random: 20000 draws each; the Tensor forms (seed and offset read from device tensors, plus
 * the offset argument) must equal the plain forms bit for bit; means and variances are held
 * to about 4 standard errors of the estimate (stated per check), so a wrong distribution
 * fails and a right one passes with probability > 0.9999.
 * Tolerances: float 1e-6 relative. */
#include <algorithm>
#include <cmath>
#include <limits>
#include "ops_ref.h"
#include "aclnnop/aclnn_ctc_loss.h"
#include "aclnnop/aclnn_ctc_loss_backward.h"
#include "aclnnop/aclnn_embedding_bag.h"
#include "aclnnop/aclnn_upsample_nearest_exact3d.h"
#include "aclnnop/aclnn_upsample_nearest_exact3d_backward.h"
#include "aclnnop/aclnn_upsample_bilinear2d_aa.h"
#include "aclnnop/aclnn_upsample_bilinear2d_aa_backward.h"
#include "aclnnop/aclnn_upsample_bicubic2d_aa.h"
#include "aclnnop/aclnn_upsample_bicubic2d_aa_grad.h"
#include "aclnnop/aclnn_random.h"
#include "aclnnop/aclnn_multinomial.h"
#include "aclnnop/aclnn_stateless_exponential.h"

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

/* ---- UpsampleNearestExact3d, UpsampleBilinear2dAA, UpsampleBicubic2dAA (+ gradients) ---- */

static void upsample() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int64_t os3v[3] = {3, 3, 3}, is3v[5] = {1, 1, 2, 2, 2};
    aclIntArray *os3 = aclCreateIntArray(os3v, 3), *is3 = aclCreateIntArray(is3v, 5);
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_DOUBLE}) {
        Dev x = make({1, 1, 2, 2, 2}, t, {0, 1, 2, 3, 4, 5, 6, 7}, STRIDED), o = make({1, 1, 3, 3, 3}, t, {9});
        RUN(S, aclnnUpsampleNearestExact3d, x.t, os3, 0.0, 0.0, 0.0, o.t);
        std::vector<double> want;
        const int m[3] = {0, 1, 1};
        for (int d = 0; d < 3; d++)
            for (int h = 0; h < 3; h++)
                for (int w = 0; w < 3; w++) want.push_back(4 * m[d] + 2 * m[h] + m[w]);
        char what[96];
        snprintf(what, sizeof what, "UpsampleNearestExact3d %s [2, 2, 2] -> [3, 3, 3]", dname(t));
        compare(what, read(o), want, 0);
        /* scalesD 3: every depth reads index floor((o + .5) / 3) = 0 */
        RUN(S, aclnnUpsampleNearestExact3d, x.t, os3, 3.0, 0.0, 0.0, o.t);
        want.clear();
        for (int d = 0; d < 3; d++)
            for (int h = 0; h < 3; h++)
                for (int w = 0; w < 3; w++) want.push_back(2 * m[h] + m[w]);
        snprintf(what, sizeof what, "UpsampleNearestExact3d %s scalesD 3", dname(t));
        compare(what, read(o), want, 0);
        Dev g = make({1, 1, 3, 3, 3}, t, {1}), gi = make({1, 1, 2, 2, 2}, t, {9}, STRIDED);
        RUN(S, aclnnUpsampleNearestExact3dBackward, g.t, os3, is3, 0.0, 0.0, 0.0, gi.t);
        snprintf(what, sizeof what, "UpsampleNearestExact3dBackward %s counts", dname(t));
        compare(what, read(gi), {1, 2, 2, 4, 2, 4, 4, 8}, 0);
        for (Dev *d : {&x, &o, &g, &gi}) release(*d);
    }
    /* anti-aliased: [1, 2, 1, 4] (two channels: the row and its double) -> [1, 2, 1, 2] */
    int64_t os2v[2] = {1, 2}, is2v[4] = {1, 2, 1, 4};
    aclIntArray *os2 = aclCreateIntArray(os2v, 2), *is2 = aclCreateIntArray(is2v, 4);
    const double c0 = .8671875, c1 = .2265625, c2 = -.0703125, cs = 1.890625;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
        double tol = t == ACL_FLOAT ? 1e-6 : t == ACL_FLOAT16 ? 2e-3 : 1e-2;
        Dev x = make({1, 2, 1, 4}, t, {1, 2, 3, 4, 2, 4, 6, 8}, TRANSPOSED), o = make({1, 2, 1, 2}, t, {9});
        char what[96];
        RUN(S, aclnnUpsampleBilinear2dAA, x.t, os2, false, 0.0, 0.0, o.t);
        snprintf(what, sizeof what, "UpsampleBilinear2dAA %s 4 -> 2", dname(t));
        compare(what, read(o), {12.0 / 7, 23.0 / 7, 24.0 / 7, 46.0 / 7}, tol);
        RUN(S, aclnnUpsampleBilinear2dAA, x.t, os2, true, 0.0, 0.0, o.t);
        snprintf(what, sizeof what, "UpsampleBilinear2dAA %s alignCorners", dname(t));
        compare(what, read(o), {2.25, 11.0 / 3, 4.5, 22.0 / 3}, tol);
        RUN(S, aclnnUpsampleBicubic2dAA, x.t, os2, false, 0.0, 0.0, o.t);
        double b0 = (c0 * 1 + c0 * 2 + c1 * 3 + c2 * 4) / cs, b1 = (c2 * 1 + c1 * 2 + c0 * 3 + c0 * 4) / cs;
        snprintf(what, sizeof what, "UpsampleBicubic2dAA %s 4 -> 2", dname(t));
        compare(what, read(o), {b0, b1, 2 * b0, 2 * b1}, tol);
        Dev g = make({1, 2, 1, 2}, t, {1, 0, 0, 1}), gi = make({1, 2, 1, 4}, t, {9}, STRIDED);
        RUN(S, aclnnUpsampleBilinear2dAABackward, g.t, os2, is2, false, 0.0, 0.0, gi.t);
        snprintf(what, sizeof what, "UpsampleBilinear2dAABackward %s", dname(t));
        compare(what, read(gi), {3.0 / 7, 3.0 / 7, 1.0 / 7, 0, 0, 1.0 / 7, 3.0 / 7, 3.0 / 7}, tol);
        RUN(S, aclnnUpsampleBicubic2dAAGrad, g.t, os2, is2, false, 0.0, 0.0, gi.t);
        snprintf(what, sizeof what, "UpsampleBicubic2dAAGrad %s", dname(t));
        compare(what, read(gi), {c0 / cs, c0 / cs, c1 / cs, c2 / cs, c2 / cs, c1 / cs, c0 / cs, c0 / cs}, tol);
        for (Dev *d : {&x, &o, &g, &gi}) release(*d);
    }
    /* upsampling 2 -> 4 with the bilinear AA filter is plain bilinear: x0, .75 x0 + .25 x1, ... */
    {
        int64_t upv[2] = {1, 4};
        aclIntArray *up = aclCreateIntArray(upv, 2);
        Dev x = make({1, 1, 1, 2}, ACL_FLOAT, {1, 5}), o = make({1, 1, 1, 4}, ACL_FLOAT, {9});
        RUN(S, aclnnUpsampleBilinear2dAA, x.t, up, false, 0.0, 0.0, o.t);
        compare("UpsampleBilinear2dAA 2 -> 4 (no widening)", read(o), {1, 2, 4, 5}, 1e-6);
        aclDestroyIntArray(up);
        release(x);
        release(o);
    }
    /* errors */
    Dev x4 = make({1, 2, 1, 4}, ACL_FLOAT, {0}), o2 = make({1, 2, 1, 2}, ACL_FLOAT, {0}), o3 = make({1, 2, 1, 3}, ACL_FLOAT, {0});
    Dev xd = make({1, 2, 1, 4}, ACL_DOUBLE, {0}), od = make({1, 2, 1, 2}, ACL_DOUBLE, {0}), x3 = make({2, 1, 4}, ACL_FLOAT, {0});
    Dev x5 = make({1, 1, 2, 2, 2}, ACL_FLOAT, {0}), o5 = make({1, 1, 3, 3, 3}, ACL_FLOAT, {0}), o5h = make({1, 1, 3, 3, 3}, ACL_FLOAT16, {0});
    Dev g5 = make({1, 1, 3, 3, 3}, ACL_FLOAT, {0}), gi5 = make({1, 1, 2, 2, 3}, ACL_FLOAT, {0});
    int64_t badv[2] = {1, 0};
    aclIntArray *bad = aclCreateIntArray(badv, 2);
    expect_code("UpsampleBilinear2dAA null self", aclnnUpsampleBilinear2dAAGetWorkspaceSize(nullptr, os2, false, 0, 0, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UpsampleBilinear2dAA null outputSize", aclnnUpsampleBilinear2dAAGetWorkspaceSize(x4.t, nullptr, false, 0, 0, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UpsampleBicubic2dAA double self", aclnnUpsampleBicubic2dAAGetWorkspaceSize(xd.t, os2, false, 0, 0, od.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBicubic2dAA out [1, 2, 1, 3]", aclnnUpsampleBicubic2dAAGetWorkspaceSize(x4.t, os2, false, 0, 0, o3.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBilinear2dAA 3-D self", aclnnUpsampleBilinear2dAAGetWorkspaceSize(x3.t, os2, false, 0, 0, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBilinear2dAA outputSize [1, 0]", aclnnUpsampleBilinear2dAAGetWorkspaceSize(x4.t, bad, false, 0, 0, o2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleBicubic2dAAGrad null out", aclnnUpsampleBicubic2dAAGradGetWorkspaceSize(o2.t, os2, is2, false, 0, 0, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("UpsampleBilinear2dAABackward inputSize [1, 2]",
                aclnnUpsampleBilinear2dAABackwardGetWorkspaceSize(o2.t, os2, bad, false, 0, 0, x4.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearestExact3d float16 out", aclnnUpsampleNearestExact3dGetWorkspaceSize(x5.t, os3, 0, 0, 0, o5h.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearestExact3d 2 output sizes", aclnnUpsampleNearestExact3dGetWorkspaceSize(x5.t, os2, 0, 0, 0, o5.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UpsampleNearestExact3dBackward gradInput [1, 1, 2, 2, 3]",
                aclnnUpsampleNearestExact3dBackwardGetWorkspaceSize(g5.t, os3, is3, 0, 0, 0, gi5.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (aclIntArray *a : {os3, is3, os2, is2, bad}) aclDestroyIntArray(a);
    for (Dev *d : {&x4, &o2, &o3, &xd, &od, &x3, &x5, &o5, &o5h, &g5, &gi5}) release(*d);
    printf("ok upsample\n");
}

/* ---- InplaceRandomTensor, InplaceRandomWithoutFromTo (+Tensor), MultinomialTensor,
 * StatelessExponentialTensor ---- */

static void check_stat(const char *what, double got, double want, double tol) {
    g_checks++;
    if (!(std::fabs(got - want) <= tol)) {
        printf("FAIL %s: %.6g, expected %.6g +- %.3g\n", what, got, want, tol);
        g_fail++;
    }
}

static void mean_var(const std::vector<double> &v, double *m, double *var) {
    double s = 0, s2 = 0;
    for (double x : v) s += x;
    *m = s / v.size();
    for (double x : v) s2 += (x - *m) * (x - *m);
    *var = s2 / (v.size() - 1);
}

static void random_ops() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t n = 20000;
    Dev seed = make({1}, ACL_INT64, {42}), off = make({1}, ACL_INT64, {7});
    /* InplaceRandomTensor [-5, 7) on int32 == InplaceRandom seed 42 offset 7 + 3 */
    {
        Dev a = make({n}, ACL_INT32, {0}), b = make({n}, ACL_INT32, {0});
        RUN(S, aclnnInplaceRandomTensor, a.t, -5, 7, seed.t, off.t, 3);
        RUN(S, aclnnInplaceRandom, b.t, -5, 7, 42, 10);
        std::vector<double> va = read(a);
        compare("InplaceRandomTensor == InplaceRandom(seed 42, offset 7 + 3)", va, read(b), 0);
        double lo = 1e9, hi = -1e9, m, var;
        for (double x : va) lo = std::min(lo, x), hi = std::max(hi, x);
        compare("InplaceRandomTensor range [-5, 7): min and max drawn", {lo, hi}, {-5, 6}, 0);
        mean_var(va, &m, &var);
        check_stat("InplaceRandomTensor mean (0.5, se 0.024)", m, 0.5, 0.1);
        check_stat("InplaceRandomTensor variance (143 / 12, se 0.06)", var, 143.0 / 12, 0.3);
        RUN(S, aclnnInplaceRandomTensor, a.t, -5, 7, seed.t, off.t, 4);
        g_checks++;
        if (read(a) == va) {
            printf("FAIL InplaceRandomTensor offset 4 drew the same numbers as offset 3\n");
            g_fail++;
        }
        release(a);
        release(b);
    }
    /* WithoutFromTo: [0, 2^24] for float, [0, 255] for uint8, {0, 1} for bool */
    struct W {
        aclDataType t;
        double max;
        double mtol;
    };
    for (W w : {W{ACL_FLOAT, 16777216.0, 16777216.0 * 0.01}, W{ACL_UINT8, 255, 2.2}, W{ACL_BOOL, 1, 0.015},
                W{ACL_FLOAT16, 2048, 21}, W{ACL_INT32, 2147483647.0, 2147483647.0 * 0.01}}) {
        Dev a = make({n}, w.t, {0}, STRIDED), b = make({n}, w.t, {0});
        RUN(S, aclnnInplaceRandomWithoutFromTo, a.t, 42, 10);
        RUN(S, aclnnInplaceRandomWithoutFromToTensor, b.t, seed.t, off.t, 3);
        std::vector<double> va = read(a);
        char what[128];
        snprintf(what, sizeof what, "InplaceRandomWithoutFromToTensor %s == plain form", dname(w.t));
        compare(what, read(b), va, 0);
        bool ok = true;
        for (double x : va) ok = ok && x >= 0 && x <= w.max && x == std::floor(x);
        g_checks++;
        if (!ok) {
            printf("FAIL InplaceRandomWithoutFromTo %s: a value outside the integers of [0, %.0f]\n", dname(w.t), w.max);
            g_fail++;
        }
        double m, var;
        mean_var(va, &m, &var);
        snprintf(what, sizeof what, "InplaceRandomWithoutFromTo %s mean (max / 2, 4+ se)", dname(w.t));
        check_stat(what, m, w.max / 2, w.mtol);
        release(a);
        release(b);
    }
    /* MultinomialTensor: (0.1, 0.2, 0.7) with replacement (se of a frequency <= 0.0033) */
    {
        Dev p = make({2, 3}, ACL_FLOAT, {1, 2, 7, 7, 2, 1}), o = make({2, n}, ACL_INT64, {9}), o2 = make({2, n}, ACL_INT64, {9});
        RUN(S, aclnnMultinomialTensor, p.t, n, true, seed.t, off.t, 3, o.t);
        RUN(S, aclnnMultinomial, p.t, n, true, 42, 10, o2.t);
        std::vector<double> v = read(o);
        compare("MultinomialTensor == Multinomial(seed 42, offset 10)", v, read(o2), 0);
        double f[2][3] = {{0}};
        for (int r = 0; r < 2; r++)
            for (int64_t i = 0; i < n; i++) f[r][static_cast<int>(v[r * n + i])] += 1.0 / n;
        compare("MultinomialTensor frequencies (0.1, 0.2, 0.7) and (0.7, 0.2, 0.1), +- 0.015",
                {f[0][0], f[0][1], f[0][2], f[1][0], f[1][1], f[1][2]}, {0.1, 0.2, 0.7, 0.7, 0.2, 0.1}, 0.015);
        Dev o3 = make({2, 3}, ACL_INT64, {9});
        RUN(S, aclnnMultinomialTensor, p.t, 3, false, seed.t, off.t, 0, o3.t);
        std::vector<double> perm = read(o3);
        bool ok = true;
        for (int r = 0; r < 2; r++) {
            std::vector<double> row(perm.begin() + r * 3, perm.begin() + r * 3 + 3);
            std::sort(row.begin(), row.end());
            ok = ok && row == std::vector<double>({0, 1, 2});
        }
        g_checks++;
        if (!ok) {
            printf("FAIL MultinomialTensor 3 of 3 without replacement is not a permutation\n");
            g_fail++;
        }
        for (Dev *d : {&p, &o, &o2, &o3}) release(*d);
    }
    /* StatelessExponentialTensor lambd 2: mean 1/2 (se 0.0035), variance 1/4 (se 0.005) */
    for (aclDataType t : {ACL_FLOAT, ACL_DOUBLE, ACL_FLOAT16}) {
        Dev a = make({100, 200}, t, {0}, TRANSPOSED), b = make({100, 200}, t, {0});
        RUN(S, aclnnStatelessExponentialTensor, a.t, seed.t, off.t, 3, 2.0);
        RUN(S, aclnnStatelessExponentialTensor, b.t, seed.t, off.t, 3, 2.0);
        std::vector<double> va = read(a);
        char what[128];
        snprintf(what, sizeof what, "StatelessExponentialTensor %s reproducible", dname(t));
        compare(what, read(b), va, 0);
        double lo = 1e9, m, var;
        for (double x : va) lo = std::min(lo, x);
        mean_var(va, &m, &var);
        snprintf(what, sizeof what, "StatelessExponentialTensor %s min >= 0", dname(t));
        check_stat(what, lo >= 0 ? 0 : lo, 0, 0);
        snprintf(what, sizeof what, "StatelessExponentialTensor %s mean 1/2", dname(t));
        check_stat(what, m, 0.5, 0.016);
        snprintf(what, sizeof what, "StatelessExponentialTensor %s variance 1/4", dname(t));
        check_stat(what, var, 0.25, 0.025);
        RUN(S, aclnnStatelessExponentialTensor, b.t, seed.t, off.t, 4, 2.0);
        g_checks++;
        if (read(b) == va) {
            printf("FAIL StatelessExponentialTensor offset 4 drew the same numbers as offset 3\n");
            g_fail++;
        }
        release(a);
        release(b);
    }
    /* errors */
    Dev x = make({4}, ACL_FLOAT, {0}), sf = make({1}, ACL_FLOAT, {0}), s2 = make({2}, ACL_INT64, {0}), xd = make({4}, ACL_DOUBLE, {0});
    Dev p = make({3}, ACL_FLOAT, {1}), oi = make({2}, ACL_INT32, {0}), ol = make({2}, ACL_INT64, {0}), xi = make({4}, ACL_INT32, {0});
    expect_code("InplaceRandomTensor null seedTensor", aclnnInplaceRandomTensorGetWorkspaceSize(x.t, 0, 5, nullptr, off.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("InplaceRandomTensor from 5 >= to 5", aclnnInplaceRandomTensorGetWorkspaceSize(x.t, 5, 5, seed.t, off.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceRandomTensor float seedTensor", aclnnInplaceRandomTensorGetWorkspaceSize(x.t, 0, 5, sf.t, off.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceRandomWithoutFromTo null selfRef", aclnnInplaceRandomWithoutFromToGetWorkspaceSize(nullptr, 1, 2, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("InplaceRandomWithoutFromTo double selfRef", aclnnInplaceRandomWithoutFromToGetWorkspaceSize(xd.t, 1, 2, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceRandomWithoutFromToTensor 2-element offsetTensor",
                aclnnInplaceRandomWithoutFromToTensorGetWorkspaceSize(x.t, seed.t, s2.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MultinomialTensor int32 out", aclnnMultinomialTensorGetWorkspaceSize(p.t, 2, true, seed.t, off.t, 0, oi.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MultinomialTensor 4 of 3 without replacement",
                aclnnMultinomialTensorGetWorkspaceSize(p.t, 4, false, seed.t, off.t, 0, ol.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MultinomialTensor null offsetTensor", aclnnMultinomialTensorGetWorkspaceSize(p.t, 2, true, seed.t, nullptr, 0, ol.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("StatelessExponentialTensor lambd 0", aclnnStatelessExponentialTensorGetWorkspaceSize(x.t, seed.t, off.t, 0, 0.0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("StatelessExponentialTensor int32 self", aclnnStatelessExponentialTensorGetWorkspaceSize(xi.t, seed.t, off.t, 0, 1.0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&seed, &off, &x, &sf, &s2, &xd, &p, &oi, &ol, &xi}) release(*d);
    printf("ok random\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    ctc();
    embedding_bag();
    upsample();
    random_ops();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
