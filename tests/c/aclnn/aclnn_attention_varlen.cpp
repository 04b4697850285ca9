/* The variable-length (TND) flash attention operators, called as CANN's operator reference
 * calls them: aclnnFlashAttentionVarLenScore (V1-V4) and aclnnFlashAttentionUnpaddingScoreGrad
 * (V1-V4). query/key/value are [T, N, D] with the sequences packed one after another and
 * actualSeqQLen/actualSeqKvLen their cumulative lengths; each sequence is attended alone.
 * Checked against a float64 host reference written here from the documented formula (the
 * sparse modes applied to each sequence: 7 and 8 make the last/first sequence a band),
 * the backward against central finite differences of that reference, and against running
 * each sequence alone through aclnnFlashAttentionScore/Grad (BSND, B = 1). softmaxMax/Sum
 * are [N, T, 8] (V1-V3; torch_npu allocates them [T, N, 8]) or [T, N, 8] with V4's
 * "same_as_input". The documented argument errors: a null required tensor gives
 * ACLNN_ERR_PARAM_NULLPTR (161001), a layout, length list or attribute outside the
 * documented range ACLNN_ERR_PARAM_INVALID (161002). */
#include <cmath>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_flash_attention_score.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"

static aclrtStream S;
static const int64_t BIG = 2147483647;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else {
        printf("error %s: %s\n", what, test_msg());
    }
}

static std::vector<double> vals(int64_t n, aclDataType t, unsigned seed) {
    std::vector<double> v = values(n, ACL_FLOAT, seed);
    for (auto &e : v) e = as_type(e / 3.0, t);
    return v;
}

/* The sequences: query lengths 3, 0, 5, 4 and key lengths 4, 2, 5, 6 (one empty query). */
static const int64_t NQ = 4, N1 = 4, N2 = 2, D = 8;
static const std::vector<int64_t> QL = {3, 0, 5, 4}, KL = {4, 2, 5, 6};
static int64_t T1, T2, SM1, SM2; /* totals and longest lengths */
static std::vector<int64_t> QE, KE; /* cumulative ends */

struct Cfg {
    int64_t sparse = 0, pre = BIG, next = BIG;
    double scale = 0.35, keep = 1.0;
    const std::vector<double> *mask = nullptr; /* [SM1, SM2] (mode 0) or [B, 1, SM1, SM2] (mode 1) */
    const std::vector<double> *drop = nullptr; /* keep bits, one per score, sequence-major */
};

static bool masked(const Cfg &c, int64_t b, int64_t i, int64_t j) {
    int64_t s1 = QL[b], s2 = KL[b], mode = c.sparse;
    int64_t first = -1, last = -1;
    for (int64_t x = 0; x < NQ; x++)
        if (QL[x] > 0 && KL[x] > 0) {
            if (first < 0) first = x;
            last = x;
        }
    if (mode == 7) mode = b == last ? 4 : 3;
    if (mode == 8) mode = b == first ? 4 : 2;
    switch (mode) {
    case 0:
        if (!c.mask) return false;
        return (*c.mask)[i * SM2 + j] != 0 || i - j > c.pre || j - i > c.next;
    case 1: return c.mask && (*c.mask)[(b * SM1 + i) * SM2 + j] != 0;
    case 2: return j > i;
    case 3: return j > i + s2 - s1;
    case 4: {
        int64_t ii = i + s2 - s1;
        return j - ii > c.next || ii - j > c.pre;
    }
    }
    return false;
}

/* The output [T1, N1, D] and each (head, row)'s max and sum ([N1, T1]). */
static std::vector<double> ref(const Cfg &c, const std::vector<double> &Q, const std::vector<double> &K,
                               const std::vector<double> &V, std::vector<double> *mx = nullptr,
                               std::vector<double> *sm = nullptr) {
    std::vector<double> O(static_cast<size_t>(T1 * N1 * D), 0.0);
    if (mx) mx->assign(static_cast<size_t>(N1 * T1), 0.0);
    if (sm) sm->assign(static_cast<size_t>(N1 * T1), 0.0);
    int64_t g = N1 / N2, q0 = 0, k0 = 0, bit0 = 0;
    for (int64_t b = 0; b < NQ; b++) {
        int64_t s1 = QL[b], s2 = KL[b];
        for (int64_t n = 0; n < N1; n++)
            for (int64_t i = 0; i < s1; i++) {
                std::vector<double> s(static_cast<size_t>(s2));
                double m = -INFINITY, sum = 0;
                for (int64_t j = 0; j < s2; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < D; d++)
                        dot += Q[((q0 + i) * N1 + n) * D + d] * K[((k0 + j) * N2 + n / g) * D + d];
                    s[j] = c.scale * dot;
                    if (!masked(c, b, i, j)) m = std::max(m, s[j]);
                }
                for (int64_t j = 0; j < s2; j++)
                    if (!masked(c, b, i, j)) sum += std::exp(s[j] - m);
                if (mx) (*mx)[n * T1 + q0 + i] = m;
                if (sm) (*sm)[n * T1 + q0 + i] = sum;
                for (int64_t j = 0; j < s2; j++) {
                    if (masked(c, b, i, j)) continue;
                    double p = std::exp(s[j] - m) / sum;
                    if (c.drop) p *= (*c.drop)[bit0 + (n * s1 + i) * s2 + j] / c.keep;
                    for (int64_t d = 0; d < D; d++) O[((q0 + i) * N1 + n) * D + d] += p * V[((k0 + j) * N2 + n / g) * D + d];
                }
            }
        bit0 += N1 * s1 * s2;
        q0 += s1;
        k0 += s2;
    }
    return O;
}

/* Central differences of L = Σ dy·out with respect to Q (0), K (1) or V (2). */
static std::vector<double> fd(const Cfg &c, std::vector<double> Q, std::vector<double> K, std::vector<double> V,
                              const std::vector<double> &DY, int which) {
    std::vector<double> &w = which == 0 ? Q : which == 1 ? K : V;
    std::vector<double> g(w.size());
    const double h = 1e-5;
    for (size_t i = 0; i < w.size(); i++) {
        double s0 = w[i], l[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            w[i] = s0 + (sgn ? -h : h);
            auto out = ref(c, Q, K, V);
            l[sgn] = 0;
            for (size_t e = 0; e < out.size(); e++) l[sgn] += out[e] * DY[e];
        }
        w[i] = s0;
        g[i] = (l[0] - l[1]) / (2 * h);
    }
    return g;
}

/* Each value repeated 8 times, [N1, T1, 8] (or [T1, N1, 8] with `tnd`). */
static std::vector<double> stat8(const std::vector<double> &x, bool tnd) {
    std::vector<double> out(static_cast<size_t>(N1 * T1 * 8));
    for (int64_t n = 0; n < N1; n++)
        for (int64_t t = 0; t < T1; t++)
            for (int e = 0; e < 8; e++) out[((tnd ? t * N1 + n : n * T1 + t)) * 8 + e] = x[n * T1 + t];
    return out;
}

/* The compressed mask of the modes 2-8: 2048x2048, 1 above the diagonal. */
static std::vector<double> compressed() {
    std::vector<double> m(2048 * 2048);
    for (int64_t i = 0; i < 2048; i++)
        for (int64_t j = 0; j < 2048; j++) m[i * 2048 + j] = j > i;
    return m;
}

static aclIntArray *ints(const std::vector<int64_t> &v) { return aclCreateIntArray(v.data(), v.size()); }

static void varlen() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const aclDataType F = ACL_FLOAT;
    Shape qs{T1, N1, D}, ks{T2, N2, D}, st{T1, N1, 8}, stn{N1, T1, 8};
    std::vector<double> Q = vals(numel(qs), F, 1), K = vals(numel(ks), F, 2), V = vals(numel(ks), F, 3),
                        DY = vals(numel(qs), F, 4);
    Dev q = make(qs, F, Q), k = make(ks, F, K), v = make(ks, F, V), dy = make(qs, F, DY);
    Dev cm = make({2048, 2048}, ACL_UINT8, compressed());
    aclIntArray *ql = ints(QE), *kl = ints(KE), *prefix = ints({0}), *qsi = ints({0}), *kvsi = ints({0});
    char tnd[] = "TND", bsnd[] = "BSND", same[] = "same_as_input", empty[] = "";

    /* 1. sparse mode 3 (right-down causal per sequence), float32: forward, softmax statistics
     *    ([N, T, 8] values in the [T, N, 8] buffer torch_npu passes), backward */
    Cfg c3;
    c3.sparse = 3;
    std::vector<double> mx, sm;
    auto want = ref(c3, Q, K, V, &mx, &sm);
    Dev o = make(qs, F, {0}), smax = make(st, F, {0}), ssum = make(st, F, {0});
    RUN(S, aclnnFlashAttentionVarLenScore, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix, ql, kl, c3.scale, 1.0,
        BIG, BIG, N1, tnd, 0, 3, smax.t, ssum.t, nullptr, o.t);
    compare("VarLenScore mode 3 attentionOut", read(o), want, 2e-5);
    compare("VarLenScore mode 3 softmaxMax [N, T, 8]", read(smax), stat8(mx, false), 1e-5);
    compare("VarLenScore mode 3 softmaxSum [N, T, 8]", read(ssum), stat8(sm, false), 1e-5);
    Dev dq = make(qs, F, {0}), dk = make(ks, F, {0}), dv = make(ks, F, {0});
    RUN(S, aclnnFlashAttentionUnpaddingScoreGrad, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, smax.t, ssum.t,
        nullptr, o.t, prefix, ql, kl, c3.scale, 1.0, BIG, BIG, N1, tnd, 0, 3, dq.t, dk.t, dv.t, nullptr);
    std::vector<double> gq = fd(c3, Q, K, V, DY, 0), gk = fd(c3, Q, K, V, DY, 1), gv = fd(c3, Q, K, V, DY, 2);
    compare("UnpaddingScoreGrad mode 3 dq", read(dq), gq, 2e-5);
    compare("UnpaddingScoreGrad mode 3 dk (zero for the empty query's keys)", read(dk), gk, 2e-5);
    compare("UnpaddingScoreGrad mode 3 dv", read(dv), gv, 2e-5);

    /* 2. each sequence alone through aclnnFlashAttentionScore/Grad (BSND, B = 1) */
    {
        auto O = read(o), DQ = read(dq), DK = read(dk), DV = read(dv);
        int64_t q0 = 0, k0 = 0;
        bool same_all = true;
        for (int64_t b = 0; b < NQ; b++) {
            int64_t s1 = QL[b], s2 = KL[b];
            if (s1 > 0) {
                auto rows = [](const std::vector<double> &x, int64_t r0, int64_t n, int64_t w) {
                    return std::vector<double>(x.begin() + r0 * w, x.begin() + (r0 + n) * w);
                };
                Shape bq{1, s1, N1, D}, bk{1, s2, N2, D}, bst{1, N1, s1, 8};
                Dev sq = make(bq, F, rows(Q, q0, s1, N1 * D)), sk = make(bk, F, rows(K, k0, s2, N2 * D)),
                    sv = make(bk, F, rows(V, k0, s2, N2 * D)), sdy = make(bq, F, rows(DY, q0, s1, N1 * D));
                Dev so = make(bq, F, {0}), sx = make(bst, F, {0}), ss = make(bst, F, {0});
                RUN(S, aclnnFlashAttentionScore, sq.t, sk.t, sv.t, nullptr, nullptr, nullptr, cm.t, prefix, c3.scale, 1.0,
                    BIG, BIG, N1, bsnd, 0, 3, sx.t, ss.t, nullptr, so.t);
                Dev sdq = make(bq, F, {0}), sdk = make(bk, F, {0}), sdv = make(bk, F, {0});
                RUN(S, aclnnFlashAttentionScoreGrad, sq.t, sk.t, sv.t, sdy.t, nullptr, nullptr, nullptr, cm.t, sx.t, ss.t,
                    nullptr, so.t, prefix, c3.scale, 1.0, BIG, BIG, N1, bsnd, 0, 3, sdq.t, sdk.t, sdv.t, nullptr);
                same_all &= compare("sequence alone: attentionOut", rows(O, q0, s1, N1 * D), read(so), 1e-6);
                same_all &= compare("sequence alone: dq", rows(DQ, q0, s1, N1 * D), read(sdq), 1e-6);
                same_all &= compare("sequence alone: dk", rows(DK, k0, s2, N2 * D), read(sdk), 1e-6);
                same_all &= compare("sequence alone: dv", rows(DV, k0, s2, N2 * D), read(sdv), 1e-6);
                for (Dev *d : {&sq, &sk, &sv, &sdy, &so, &sx, &ss, &sdq, &sdk, &sdv}) release(*d);
            }
            q0 += s1;
            k0 += s2;
        }
        if (same_all) printf("ok each sequence alone\n");
    }

    /* 3. V2 (pseType 1), V3 (no rope) and V4 ("" and same_as_input) against V1 */
    {
        Dev o2 = make(qs, F, {0}), x2 = make(stn, F, {0}), s2 = make(stn, F, {0});
        RUN(S, aclnnFlashAttentionVarLenScoreV2, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix, ql, kl, qsi, kvsi,
            c3.scale, 1.0, BIG, BIG, N1, tnd, 0, 3, 1, x2.t, s2.t, nullptr, o2.t);
        compare("VarLenScoreV2 pseType 1 equals V1", read(o2), read(o), 0);
        compare("VarLenScoreV2 softmaxMax [N, T, 8] shape", read(x2), read(smax), 0);
        RUN(S, aclnnFlashAttentionVarLenScoreV3, q.t, nullptr, k.t, nullptr, v.t, nullptr, nullptr, nullptr, cm.t, prefix, ql,
            kl, qsi, kvsi, c3.scale, 1.0, BIG, BIG, N1, tnd, 0, 3, 1, x2.t, s2.t, nullptr, o2.t);
        compare("VarLenScoreV3 without rope equals V1", read(o2), read(o), 0);
        RUN(S, aclnnFlashAttentionVarLenScoreV4, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix, ql, kl, c3.scale,
            1.0, BIG, BIG, N1, tnd, 0, 3, empty, x2.t, s2.t, nullptr, o2.t);
        compare("VarLenScoreV4 \"\" softmaxMax [N, T, 8]", read(x2), read(smax), 0);
        Dev x4 = make(st, F, {0}), s4 = make(st, F, {0});
        RUN(S, aclnnFlashAttentionVarLenScoreV4, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix, ql, kl, c3.scale,
            1.0, BIG, BIG, N1, tnd, 0, 3, same, x4.t, s4.t, nullptr, o2.t);
        compare("VarLenScoreV4 same_as_input attentionOut", read(o2), read(o), 0);
        compare("VarLenScoreV4 same_as_input softmaxMax [T, N, 8]", read(x4), stat8(mx, true), 1e-5);
        compare("VarLenScoreV4 same_as_input softmaxSum [T, N, 8]", read(s4), stat8(sm, true), 1e-5);
        Dev gq2 = make(qs, F, {0}), gk2 = make(ks, F, {0}), gv2 = make(ks, F, {0});
        RUN(S, aclnnFlashAttentionUnpaddingScoreGradV2, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, smax.t, ssum.t,
            nullptr, o.t, prefix, ql, kl, qsi, kvsi, c3.scale, 1.0, BIG, BIG, N1, tnd, 0, 3, 1, gq2.t, gk2.t, gv2.t, nullptr);
        compare("UnpaddingScoreGradV2 dq equals V1", read(gq2), read(dq), 0);
        compare("UnpaddingScoreGradV2 dk equals V1", read(gk2), read(dk), 0);
        RUN(S, aclnnFlashAttentionUnpaddingScoreGradV3, q.t, nullptr, k.t, nullptr, v.t, dy.t, nullptr, nullptr, nullptr,
            cm.t, smax.t, ssum.t, nullptr, o.t, prefix, ql, kl, qsi, kvsi, c3.scale, 1.0, BIG, BIG, N1, tnd, 0, 3, 1, gq2.t,
            nullptr, gk2.t, nullptr, gv2.t, nullptr);
        compare("UnpaddingScoreGradV3 without rope dv equals V1", read(gv2), read(dv), 0);
        /* V4 reads the statistics of the same layout it is told */
        RUN(S, aclnnFlashAttentionUnpaddingScoreGradV4, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, x4.t, s4.t,
            nullptr, o.t, prefix, ql, kl, c3.scale, 1.0, BIG, BIG, N1, tnd, 0, 3, gq2.t, gk2.t, gv2.t, nullptr, same);
        compare("UnpaddingScoreGradV4 same_as_input dq equals V1", read(gq2), read(dq), 1e-12);
        compare("UnpaddingScoreGradV4 same_as_input dv equals V1", read(gv2), read(dv), 1e-12);
        /* without saved statistics and output the backward recomputes them */
        RUN(S, aclnnFlashAttentionUnpaddingScoreGrad, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, nullptr, nullptr,
            nullptr, nullptr, prefix, ql, kl, c3.scale, 1.0, BIG, BIG, N1, tnd, 0, 3, gq2.t, gk2.t, gv2.t, nullptr);
        compare("UnpaddingScoreGrad without saved statistics dk", read(gk2), gk, 2e-5);
        for (Dev *d : {&o2, &x2, &s2, &x4, &s4, &gq2, &gk2, &gv2}) release(*d);
        printf("ok versions\n");
    }

    /* 4. the other sparse modes and masks, forward and backward against the reference */
    {
        std::vector<double> M0(static_cast<size_t>(SM1 * SM2)), M1(static_cast<size_t>(NQ * SM1 * SM2));
        for (size_t i = 0; i < M0.size(); i++) M0[i] = (i * 7 % 5) == 0;
        for (size_t i = 0; i < M1.size(); i++) M1[i] = (i * 3 % 7) == 0;
        for (int64_t r = 0; r < NQ * SM1; r++) M1[r * SM2] = 0; /* no fully masked row */
        for (int64_t r = 0; r < SM1; r++) M0[r * SM2] = 0;
        Dev m0 = make({SM1, SM2}, ACL_BOOL, M0), m1 = make({NQ, 1, SM1, SM2}, ACL_BOOL, M1);
        struct Case {
            const char *name;
            int64_t sparse, pre, next;
            const Dev *m;
            const std::vector<double> *hm;
        } cases[] = {
            {"mode 0 no mask", 0, BIG, BIG, nullptr, nullptr},
            {"mode 0 [S1max, S2max] mask, pre 2, next 1", 0, 2, 1, &m0, &M0},
            {"mode 1 [B, 1, S1max, S2max] mask", 1, BIG, BIG, &m1, &M1},
            {"mode 2 left-up causal", 2, BIG, BIG, &cm, nullptr},
            {"mode 4 band pre 2, next 0", 4, 2, 0, &cm, nullptr},
            {"mode 7 last sequence band pre 6, next -1", 7, 6, -1, &cm, nullptr},
            {"mode 8 first sequence band pre 4, next 1", 8, 4, 1, &cm, nullptr},
        };
        for (const Case &cs : cases) {
            Cfg c;
            c.sparse = cs.sparse;
            c.pre = cs.pre;
            c.next = cs.next;
            c.mask = cs.hm;
            Dev oo = make(qs, F, {0}), xx = make(st, F, {0}), ss = make(st, F, {0});
            RUN(S, aclnnFlashAttentionVarLenScore, q.t, k.t, v.t, nullptr, nullptr, nullptr, cs.m ? cs.m->t : nullptr, prefix,
                ql, kl, c.scale, 1.0, cs.pre, cs.next, N1, tnd, 0, cs.sparse, xx.t, ss.t, nullptr, oo.t);
            char what[160];
            snprintf(what, sizeof what, "VarLenScore %s", cs.name);
            compare(what, read(oo), ref(c, Q, K, V), 2e-5);
            Dev gq_ = make(qs, F, {0}), gk_ = make(ks, F, {0}), gv_ = make(ks, F, {0});
            RUN(S, aclnnFlashAttentionUnpaddingScoreGrad, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr,
                cs.m ? cs.m->t : nullptr, xx.t, ss.t, nullptr, oo.t, prefix, ql, kl, c.scale, 1.0, cs.pre, cs.next, N1, tnd,
                0, cs.sparse, gq_.t, gk_.t, gv_.t, nullptr);
            snprintf(what, sizeof what, "UnpaddingScoreGrad %s dq", cs.name);
            compare(what, read(gq_), fd(c, Q, K, V, DY, 0), 2e-5);
            snprintf(what, sizeof what, "UnpaddingScoreGrad %s dk", cs.name);
            compare(what, read(gk_), fd(c, Q, K, V, DY, 1), 2e-5);
            for (Dev *d : {&oo, &xx, &ss, &gq_, &gk_, &gv_}) release(*d);
        }
        release(m0);
        release(m1);
        printf("ok sparse modes\n");
    }

    /* 5. dropout: keep bits sequence after sequence, [N, S1, S2] each */
    {
        int64_t scores = 0;
        for (int64_t b = 0; b < NQ; b++) scores += N1 * QL[b] * KL[b];
        std::vector<double> bits(static_cast<size_t>(scores)), bytes(static_cast<size_t>((scores + 7) / 8), 0.0);
        for (int64_t i = 0; i < scores; i++) {
            bits[i] = (i * 5 % 3) != 0;
            if (bits[i] != 0) bytes[i / 8] += 1 << (i % 8);
        }
        Dev dm = make({static_cast<int64_t>(bytes.size())}, ACL_UINT8, bytes);
        Cfg c;
        c.sparse = 3;
        c.keep = 0.6;
        c.drop = &bits;
        Dev oo = make(qs, F, {0}), xx = make(st, F, {0}), ss = make(st, F, {0});
        RUN(S, aclnnFlashAttentionVarLenScore, q.t, k.t, v.t, nullptr, dm.t, nullptr, cm.t, prefix, ql, kl, c.scale, c.keep,
            BIG, BIG, N1, tnd, 0, 3, xx.t, ss.t, nullptr, oo.t);
        compare("VarLenScore dropout keep 0.6", read(oo), ref(c, Q, K, V), 2e-5);
        Dev gq_ = make(qs, F, {0}), gk_ = make(ks, F, {0}), gv_ = make(ks, F, {0});
        RUN(S, aclnnFlashAttentionUnpaddingScoreGrad, q.t, k.t, v.t, dy.t, nullptr, dm.t, nullptr, cm.t, xx.t, ss.t, nullptr,
            oo.t, prefix, ql, kl, c.scale, c.keep, BIG, BIG, N1, tnd, 0, 3, gq_.t, gk_.t, gv_.t, nullptr);
        compare("UnpaddingScoreGrad dropout dq", read(gq_), fd(c, Q, K, V, DY, 0), 2e-5);
        compare("UnpaddingScoreGrad dropout dv", read(gv_), fd(c, Q, K, V, DY, 2), 2e-5);
        Dev small = make({3}, ACL_UINT8, {255});
        expect_code("VarLenScore dropMask too small",
                    aclnnFlashAttentionVarLenScoreGetWorkspaceSize(q.t, k.t, v.t, nullptr, small.t, nullptr, cm.t, prefix,
                                                                   ql, kl, c.scale, c.keep, BIG, BIG, N1, tnd, 0, 3, xx.t,
                                                                   ss.t, nullptr, oo.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *d : {&dm, &oo, &xx, &ss, &gq_, &gk_, &gv_, &small}) release(*d);
        printf("ok dropout\n");
    }

    /* 6. float16 */
    {
        const aclDataType H = ACL_FLOAT16;
        std::vector<double> Qh = vals(numel(qs), H, 1), Kh = vals(numel(ks), H, 2), Vh = vals(numel(ks), H, 3);
        Dev hq = make(qs, H, Qh), hk = make(ks, H, Kh), hv = make(ks, H, Vh), ho = make(qs, H, {0});
        Dev xx = make(st, F, {0}), ss = make(st, F, {0});
        Cfg c;
        c.sparse = 2;
        RUN(S, aclnnFlashAttentionVarLenScore, hq.t, hk.t, hv.t, nullptr, nullptr, nullptr, cm.t, prefix, ql, kl, c.scale,
            1.0, BIG, BIG, N1, tnd, 0, 2, xx.t, ss.t, nullptr, ho.t);
        compare("VarLenScore float16 mode 2", read(ho), ref(c, Qh, Kh, Vh), 4e-3);
        for (Dev *d : {&hq, &hk, &hv, &ho, &xx, &ss}) release(*d);
    }

    /* 7. the documented argument errors */
    {
        auto fwd = [&](const aclTensor *qq, aclIntArray *a, aclIntArray *b, char *lay, int64_t sparse, const aclTensor *mx_,
                       const aclTensor *out) {
            return aclnnFlashAttentionVarLenScoreGetWorkspaceSize(qq, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix, a, b,
                                                                  0.35, 1.0, BIG, BIG, N1, lay, 0, sparse, mx_, ssum.t,
                                                                  nullptr, out, &ws, &ex);
        };
        expect_code("VarLenScore null query", fwd(nullptr, ql, kl, tnd, 3, smax.t, o.t), ACLNN_ERR_PARAM_NULLPTR);
        expect_code("VarLenScore null attentionOut", fwd(q.t, ql, kl, tnd, 3, smax.t, nullptr), ACLNN_ERR_PARAM_NULLPTR);
        expect_code("VarLenScore layout BSND", fwd(q.t, ql, kl, bsnd, 3, smax.t, o.t), ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScore no actualSeqQLen", fwd(q.t, nullptr, kl, tnd, 3, smax.t, o.t), ACLNN_ERR_PARAM_INVALID);
        std::vector<int64_t> shortq(QE), dec(QE), fewer(QE.begin(), QE.end() - 1);
        shortq.back() -= 1;
        std::swap(dec[1], dec[2]);
        aclIntArray *a1 = ints(shortq), *a2 = ints(dec), *a3 = ints(fewer);
        expect_code("VarLenScore actualSeqQLen not ending at T", fwd(q.t, a1, kl, tnd, 3, smax.t, o.t),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScore actualSeqQLen decreasing", fwd(q.t, a2, kl, tnd, 3, smax.t, o.t), ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScore fewer query than key lengths", fwd(q.t, a3, kl, tnd, 3, smax.t, o.t),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScore sparseMode 5 (not for variable lengths)", fwd(q.t, ql, kl, tnd, 5, smax.t, o.t),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScore sparseMode 9", fwd(q.t, ql, kl, tnd, 9, smax.t, o.t), ACLNN_ERR_PARAM_INVALID);
        Dev bad = make({T1, N1, 4}, F, {0});
        expect_code("VarLenScore softmaxMax [T, N, 4]", fwd(q.t, ql, kl, tnd, 3, bad.t, o.t), ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScore attentionOut of the key's shape", fwd(q.t, ql, kl, tnd, 3, smax.t, k.t),
                    ACLNN_ERR_PARAM_INVALID);
        char tndl[] = "TND";
        expect_code("VarLenScoreV4 softmaxOutLayout \"TND\"",
                    aclnnFlashAttentionVarLenScoreV4GetWorkspaceSize(q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix,
                                                                     ql, kl, 0.35, 1.0, BIG, BIG, N1, tnd, 0, 3, tndl,
                                                                     smax.t, ssum.t, nullptr, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScoreV3 queryRope given",
                    aclnnFlashAttentionVarLenScoreV3GetWorkspaceSize(q.t, q.t, k.t, k.t, v.t, nullptr, nullptr, nullptr,
                                                                     cm.t, prefix, ql, kl, qsi, kvsi, 0.35, 1.0, BIG, BIG,
                                                                     N1, tnd, 0, 3, 1, smax.t, ssum.t, nullptr, o.t, &ws,
                                                                     &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("FlashAttentionScore layout TND",
                    aclnnFlashAttentionScoreGetWorkspaceSize(q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix, 0.35,
                                                             1.0, BIG, BIG, N1, tnd, 0, 3, smax.t, ssum.t, nullptr, o.t,
                                                             &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("UnpaddingScoreGrad null dqOut",
                    aclnnFlashAttentionUnpaddingScoreGradGetWorkspaceSize(
                        q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, smax.t, ssum.t, nullptr, o.t, prefix, ql, kl,
                        0.35, 1.0, BIG, BIG, N1, tnd, 0, 3, nullptr, dk.t, dv.t, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("UnpaddingScoreGrad dy of the key's shape",
                    aclnnFlashAttentionUnpaddingScoreGradGetWorkspaceSize(
                        q.t, k.t, v.t, k.t, nullptr, nullptr, nullptr, cm.t, smax.t, ssum.t, nullptr, o.t, prefix, ql, kl,
                        0.35, 1.0, BIG, BIG, N1, tnd, 0, 3, dq.t, dk.t, dv.t, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("UnpaddingScoreGrad key lengths not ending at T",
                    aclnnFlashAttentionUnpaddingScoreGradGetWorkspaceSize(
                        q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, smax.t, ssum.t, nullptr, o.t, prefix, ql, ql,
                        0.35, 1.0, BIG, BIG, N1, tnd, 0, 3, dq.t, dk.t, dv.t, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        /* a pse needs sequences of one length in npu-emu */
        Dev pse = make({NQ, N1, SM1, SM2}, F, {0.1});
        expect_code("VarLenScore pse with unequal lengths",
                    aclnnFlashAttentionVarLenScoreGetWorkspaceSize(q.t, k.t, v.t, pse.t, nullptr, nullptr, cm.t, prefix, ql,
                                                                   kl, 0.35, 1.0, BIG, BIG, N1, tnd, 0, 3, smax.t, ssum.t,
                                                                   nullptr, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (aclIntArray *a : {a1, a2, a3}) aclDestroyIntArray(a);
        release(bad);
        release(pse);
        printf("ok errors\n");
    }
    for (aclIntArray *a : {ql, kl, prefix, qsi, kvsi}) aclDestroyIntArray(a);
    for (Dev *d : {&q, &k, &v, &dy, &cm, &o, &smax, &ssum, &dq, &dk, &dv}) release(*d);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    int64_t q = 0, k = 0;
    for (int64_t b = 0; b < NQ; b++) {
        QE.push_back(q += QL[b]);
        KE.push_back(k += KL[b]);
        SM1 = std::max(SM1, QL[b]);
        SM2 = std::max(SM2, KL[b]);
    }
    T1 = q;
    T2 = k;
    varlen();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
