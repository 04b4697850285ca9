/* The newer flash-attention versions with an attention sink, called as CANN's operator
 * reference calls them: aclnnFlashAttentionScoreV3 / aclnnFlashAttentionScoreGradV3 (BSND)
 * and aclnnFlashAttentionVarLenScoreV5 / aclnnFlashAttentionUnpaddingScoreGradV5 (TND, with
 * their GetMaxWorkspaceSize), plus aclnnFusedInferAttentionScoreV3/V4GetMaxWorkspaceSize.
 * The sink is one float32 logit per query head: each softmax row gets the extra term
 * e^(sink - m), m = max(sink, max_j s_ij), a column without a value. Checked against a
 * float64 host reference written here from that formula (output, softmaxMax = m,
 * softmaxSum including the sink term), the backward (dq, dk, dv and dsink) against central
 * finite differences of that reference; without a sink V3/V5 equal V2/V4. The documented
 * argument errors: a null required tensor gives ACLNN_ERR_PARAM_NULLPTR (161001), a sink of
 * another dtype or shape ACLNN_ERR_PARAM_INVALID (161002). Also aclnnNsaCompress / NsaCompressGrad
 * (TND, float16 and bfloat16) against a float64 host reference of the block-weighted sum, and
 * aclnnFlashAttentionScoreV4 / GradV4 (every layout in one entry) against V3 / VarLenScoreV5. */
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_flash_attention_score.h"
#include "aclnnop/aclnn_flash_attention_score_grad.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v3.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v4.h"
#include "aclnnop/aclnn_nsa_compress.h"
#include "aclnnop/aclnn_nsa_compress_grad.h"

static aclrtStream S;
static const int64_t BIG = 2147483647;
static const int64_t N1 = 4, N2 = 2, D = 8;
static const double SCALE = 0.4;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else {
        printf("error %s: %s\n", what, test_msg());
    }
}

static std::vector<double> vals(int64_t n, unsigned seed) {
    std::vector<double> v = values(n, ACL_FLOAT, seed);
    for (auto &e : v) e = as_type(e / 2.0, ACL_FLOAT);
    return v;
}

/* A sequence: query rows q0..q0+s1, key rows k0..k0+s2 of [T, N, D] tensors. */
struct Seq {
    int64_t q0, s1, k0, s2;
};

/* The output [T1, N1, D] and each (head, query row)'s max and sum ([N1][T1]); `causal` is
 * sparse mode 3 (key j of a row i hidden when j > i + s2 - s1). */
static std::vector<double> ref(const std::vector<Seq> &seqs, int64_t t1, bool causal, const std::vector<double> &Q,
                               const std::vector<double> &K, const std::vector<double> &V,
                               const std::vector<double> *sink, std::vector<double> *mx = nullptr,
                               std::vector<double> *sm = nullptr) {
    std::vector<double> O(static_cast<size_t>(t1 * N1 * D), 0.0);
    if (mx) mx->assign(static_cast<size_t>(N1 * t1), 0.0);
    if (sm) sm->assign(static_cast<size_t>(N1 * t1), 0.0);
    int64_t g = N1 / N2;
    for (const Seq &q : seqs)
        for (int64_t n = 0; n < N1; n++)
            for (int64_t i = 0; i < q.s1; i++) {
                std::vector<double> s(static_cast<size_t>(q.s2));
                double m = sink ? (*sink)[n] : -INFINITY, sum = 0;
                auto hidden = [&](int64_t j) { return causal && j > i + q.s2 - q.s1; };
                for (int64_t j = 0; j < q.s2; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < D; d++)
                        dot += Q[((q.q0 + i) * N1 + n) * D + d] * K[((q.k0 + j) * N2 + n / g) * D + d];
                    s[j] = SCALE * dot;
                    if (!hidden(j)) m = std::max(m, s[j]);
                }
                for (int64_t j = 0; j < q.s2; j++)
                    if (!hidden(j)) sum += std::exp(s[j] - m);
                if (sink) sum += std::exp((*sink)[n] - m);
                if (mx) (*mx)[n * t1 + q.q0 + i] = m;
                if (sm) (*sm)[n * t1 + q.q0 + i] = sum;
                for (int64_t j = 0; j < q.s2; j++) {
                    if (hidden(j)) continue;
                    double p = std::exp(s[j] - m) / sum;
                    for (int64_t d = 0; d < D; d++)
                        O[((q.q0 + i) * N1 + n) * D + d] += p * V[((q.k0 + j) * N2 + n / g) * D + d];
                }
            }
    return O;
}

/* Central differences of L = Σ dy·out with respect to Q (0), K (1), V (2) or the sink (3). */
static std::vector<double> fd(const std::vector<Seq> &seqs, int64_t t1, bool causal, std::vector<double> Q,
                              std::vector<double> K, std::vector<double> V, std::vector<double> SK,
                              const std::vector<double> &DY, int which) {
    std::vector<double> &w = which == 0 ? Q : which == 1 ? K : which == 2 ? V : SK;
    std::vector<double> g(w.size());
    const double h = 1e-5;
    for (size_t i = 0; i < w.size(); i++) {
        double s0 = w[i], l[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            w[i] = s0 + (sgn ? -h : h);
            auto out = ref(seqs, t1, causal, Q, K, V, &SK);
            l[sgn] = 0;
            for (size_t e = 0; e < out.size(); e++) l[sgn] += out[e] * DY[e];
        }
        w[i] = s0;
        g[i] = (l[0] - l[1]) / (2 * h);
    }
    return g;
}

static aclIntArray *ints(const std::vector<int64_t> &v) { return aclCreateIntArray(v.data(), v.size()); }

/* 1. BSND: aclnnFlashAttentionScoreV3 / GradV3 */
static void bsnd() {
    const aclDataType F = ACL_FLOAT;
    const int64_t B = 2, S1 = 5, S2 = 6;
    Shape qs{B, S1, N1, D}, ks{B, S2, N2, D}, st{B, N1, S1, 8};
    std::vector<double> Q = vals(numel(qs), 11), K = vals(numel(ks), 12), V = vals(numel(ks), 13),
                        DY = vals(numel(qs), 14), SK = {0.5, -1.0, 2.0, 0.0};
    std::vector<Seq> seqs;
    for (int64_t b = 0; b < B; b++) seqs.push_back({b * S1, S1, b * S2, S2});
    /* [B, N1, S1, 8] from [N1][T1] */
    auto stat8 = [&](const std::vector<double> &x) {
        std::vector<double> out(static_cast<size_t>(numel(st)));
        for (int64_t b = 0; b < B; b++)
            for (int64_t n = 0; n < N1; n++)
                for (int64_t i = 0; i < S1; i++)
                    for (int e = 0; e < 8; e++) out[((b * N1 + n) * S1 + i) * 8 + e] = x[n * B * S1 + b * S1 + i];
        return out;
    };
    Dev q = make(qs, F, Q), k = make(ks, F, K), v = make(ks, F, V), dy = make(qs, F, DY), sink = make({N1}, F, SK);
    Dev cm = make({2048, 2048}, ACL_UINT8, {0});
    {
        std::vector<double> m(2048 * 2048);
        for (int64_t i = 0; i < 2048; i++)
            for (int64_t j = 0; j < 2048; j++) m[i * 2048 + j] = j > i;
        release(cm);
        cm = make({2048, 2048}, ACL_UINT8, m);
    }
    aclIntArray *prefix = ints({0}), *qsi = ints({0}), *kvsi = ints({0});
    char bsnd_[] = "BSND";
    for (int causal = 0; causal < 2; causal++) {
        std::vector<double> mx, sm;
        auto want = ref(seqs, B * S1, causal, Q, K, V, &SK, &mx, &sm);
        Dev o = make(qs, F, {0}), smax = make(st, F, {0}), ssum = make(st, F, {0});
        int64_t mode = causal ? 3 : 0;
        RUN(S, aclnnFlashAttentionScoreV3, q.t, k.t, v.t, nullptr, nullptr, nullptr, causal ? cm.t : nullptr, sink.t,
            prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, mode, 1, smax.t, ssum.t, nullptr, o.t);
        compare(causal ? "ScoreV3 sink mode 3 attentionOut" : "ScoreV3 sink attentionOut", read(o), want, 2e-5);
        compare(causal ? "ScoreV3 sink mode 3 softmaxMax" : "ScoreV3 sink softmaxMax (max with the sink)", read(smax),
                stat8(mx), 1e-5);
        compare(causal ? "ScoreV3 sink mode 3 softmaxSum" : "ScoreV3 sink softmaxSum (with e^(sink - m))", read(ssum),
                stat8(sm), 1e-5);
        Dev dq = make(qs, F, {0}), dk = make(ks, F, {0}), dv = make(ks, F, {0}), dsink = make({N1}, F, {7});
        Dev dpse = make({0}, F, {});
        RUN(S, aclnnFlashAttentionScoreGradV3, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, causal ? cm.t : nullptr,
            smax.t, ssum.t, nullptr, o.t, sink.t, prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, mode, 1, dq.t,
            dk.t, dv.t, dpse.t, dsink.t);
        compare("ScoreGradV3 dq", read(dq), fd(seqs, B * S1, causal, Q, K, V, SK, DY, 0), 2e-5);
        compare("ScoreGradV3 dk", read(dk), fd(seqs, B * S1, causal, Q, K, V, SK, DY, 1), 2e-5);
        compare("ScoreGradV3 dv", read(dv), fd(seqs, B * S1, causal, Q, K, V, SK, DY, 2), 2e-5);
        compare("ScoreGradV3 dsink", read(dsink), fd(seqs, B * S1, causal, Q, K, V, SK, DY, 3), 2e-5);
        for (Dev *d : {&o, &smax, &ssum, &dq, &dk, &dv, &dsink, &dpse}) release(*d);
    }
    printf("ok score v3 sink\n");

    /* without a sink V3 equals V2 */
    {
        Dev o2 = make(qs, F, {0}), x2 = make(st, F, {0}), s2 = make(st, F, {0});
        Dev o3 = make(qs, F, {0}), x3 = make(st, F, {0}), s3 = make(st, F, {0});
        RUN(S, aclnnFlashAttentionScoreV2, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, prefix, qsi, kvsi, SCALE,
            1.0, BIG, BIG, N1, bsnd_, 0, 3, 1, x2.t, s2.t, nullptr, o2.t);
        RUN(S, aclnnFlashAttentionScoreV3, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, nullptr, prefix, qsi, kvsi,
            SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 3, 1, x3.t, s3.t, nullptr, o3.t);
        compare("ScoreV3 without sink equals V2", read(o3), read(o2), 0);
        compare("ScoreV3 without sink softmaxSum equals V2", read(s3), read(s2), 0);
        auto want = ref(seqs, B * S1, true, Q, K, V, nullptr);
        compare("ScoreV3 without sink against the reference", read(o3), want, 2e-5);
        Dev gq2 = make(qs, F, {0}), gk2 = make(ks, F, {0}), gv2 = make(ks, F, {0});
        Dev gq3 = make(qs, F, {0}), gk3 = make(ks, F, {0}), gv3 = make(ks, F, {0}), ds = make({0}, F, {});
        RUN(S, aclnnFlashAttentionScoreGradV2, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, x2.t, s2.t,
            nullptr, o2.t, prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 3, 1, gq2.t, gk2.t, gv2.t, nullptr);
        RUN(S, aclnnFlashAttentionScoreGradV3, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, x3.t, s3.t,
            nullptr, o3.t, nullptr, prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 3, 1, gq3.t, gk3.t, gv3.t,
            nullptr, ds.t);
        compare("ScoreGradV3 without sink dq equals V2", read(gq3), read(gq2), 0);
        compare("ScoreGradV3 without sink dk equals V2", read(gk3), read(gk2), 0);
        compare("ScoreGradV3 without sink dv equals V2", read(gv3), read(gv2), 0);
        for (Dev *d : {&o2, &x2, &s2, &o3, &x3, &s3, &gq2, &gk2, &gv2, &gq3, &gk3, &gv3, &ds}) release(*d);
        printf("ok score v3 without sink\n");
    }

    /* aclnnFlashAttentionScoreV4 / GradV4 (the Ascend950 entry) equal V3 / GradV3 */
    {
        Dev o3 = make(qs, F, {0}), x3 = make(st, F, {0}), s3 = make(st, F, {0});
        Dev o4 = make(qs, F, {0}), x4 = make(st, F, {0}), s4 = make(st, F, {0});
        char none[] = "";
        RUN(S, aclnnFlashAttentionScoreV3, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, sink.t, prefix, qsi, kvsi,
            SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 3, 1, x3.t, s3.t, nullptr, o3.t);
        RUN(S, aclnnFlashAttentionScoreV4, q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, nullptr, nullptr, nullptr,
            nullptr, nullptr, sink.t, prefix, nullptr, nullptr, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 3, 0, 1,
            none, 0, 0, x4.t, s4.t, nullptr, o4.t);
        compare("ScoreV4 equals V3", read(o4), read(o3), 0);
        compare("ScoreV4 softmaxSum equals V3", read(s4), read(s3), 0);
        Dev g3[4] = {make(qs, F, {0}), make(ks, F, {0}), make(ks, F, {0}), make({N1}, F, {0})};
        Dev g4[4] = {make(qs, F, {0}), make(ks, F, {0}), make(ks, F, {0}), make({N1}, F, {0})};
        RUN(S, aclnnFlashAttentionScoreGradV3, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, x3.t, s3.t,
            nullptr, o3.t, sink.t, prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 3, 1, g3[0].t, g3[1].t,
            g3[2].t, nullptr, g3[3].t);
        RUN(S, aclnnFlashAttentionScoreGradV4, q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, cm.t, x4.t, s4.t,
            nullptr, o4.t, sink.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, prefix, nullptr,
            nullptr, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, none, 0, 3, 1, 0, 0, 0, g4[0].t, g4[1].t, g4[2].t,
            nullptr, nullptr, nullptr, g4[3].t);
        const char *names[4] = {"ScoreGradV4 dq equals V3", "ScoreGradV4 dk equals V3", "ScoreGradV4 dv equals V3",
                                "ScoreGradV4 dsink equals V3"};
        for (int i = 0; i < 4; i++) compare(names[i], read(g4[i]), read(g3[i]), 0);
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        expect_code("ScoreV4 dScaleQOptional (FP8, not modelled)",
                    aclnnFlashAttentionScoreV4GetWorkspaceSize(
                        q.t, k.t, v.t, nullptr, nullptr, nullptr, cm.t, nullptr, nullptr, sink.t, nullptr, nullptr,
                        sink.t, prefix, nullptr, nullptr, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 3, 0, 1, none,
                        0, 0, x4.t, s4.t, nullptr, o4.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *d : {&o3, &x3, &s3, &o4, &x4, &s4}) release(*d);
        for (int i = 0; i < 4; i++) {
            release(g3[i]);
            release(g4[i]);
        }
        printf("ok score v4\n");
    }

    /* errors */
    {
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        Dev o = make(qs, F, {0}), smax = make(st, F, {0}), ssum = make(st, F, {0});
        Dev hsink = make({N1}, ACL_FLOAT16, {0}), wide = make({N1 + 1}, F, {0});
        Dev dq = make(qs, F, {0}), dk = make(ks, F, {0}), dv = make(ks, F, {0}), dsink = make({N1}, F, {0});
        expect_code("ScoreV3 null query",
                    aclnnFlashAttentionScoreV3GetWorkspaceSize(nullptr, k.t, v.t, nullptr, nullptr, nullptr, nullptr,
                                                               sink.t, prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1,
                                                               bsnd_, 0, 0, 1, smax.t, ssum.t, nullptr, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("ScoreV3 float16 sink",
                    aclnnFlashAttentionScoreV3GetWorkspaceSize(q.t, k.t, v.t, nullptr, nullptr, nullptr, nullptr,
                                                               hsink.t, prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1,
                                                               bsnd_, 0, 0, 1, smax.t, ssum.t, nullptr, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScoreV3 sink of headNum + 1 values",
                    aclnnFlashAttentionScoreV3GetWorkspaceSize(q.t, k.t, v.t, nullptr, nullptr, nullptr, nullptr,
                                                               wide.t, prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1,
                                                               bsnd_, 0, 0, 1, smax.t, ssum.t, nullptr, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScoreGradV3 dsinkOut without sinkInOptional",
                    aclnnFlashAttentionScoreGradV3GetWorkspaceSize(
                        q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, nullptr, smax.t, ssum.t, nullptr, o.t, nullptr,
                        prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 0, 1, dq.t, dk.t, dv.t, nullptr,
                        dsink.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("ScoreGradV3 null dqOut",
                    aclnnFlashAttentionScoreGradV3GetWorkspaceSize(
                        q.t, k.t, v.t, dy.t, nullptr, nullptr, nullptr, nullptr, smax.t, ssum.t, nullptr, o.t, sink.t,
                        prefix, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, bsnd_, 0, 0, 1, nullptr, dk.t, dv.t, nullptr,
                        dsink.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        for (Dev *d : {&o, &smax, &ssum, &hsink, &wide, &dq, &dk, &dv, &dsink}) release(*d);
        printf("ok score v3 errors\n");
    }
    for (aclIntArray *a : {prefix, qsi, kvsi}) aclDestroyIntArray(a);
    for (Dev *d : {&q, &k, &v, &dy, &sink, &cm}) release(*d);
}

/* 2. TND: aclnnFlashAttentionVarLenScoreV5 / UnpaddingScoreGradV5 */
static void tnd() {
    const aclDataType F = ACL_FLOAT;
    std::vector<Seq> seqs = {{0, 3, 0, 4}, {3, 4, 4, 5}};
    const int64_t T1 = 7, T2 = 9;
    Shape qs{T1, N1, D}, ks{T2, N2, D}, st{T1, N1, 8};
    std::vector<double> Q = vals(numel(qs), 21), K = vals(numel(ks), 22), V = vals(numel(ks), 23),
                        DY = vals(numel(qs), 24), SK = {-0.5, 1.5, 0.25, 3.0};
    Dev q = make(qs, F, Q), k = make(ks, F, K), v = make(ks, F, V), dy = make(qs, F, DY), sink = make({N1}, F, SK);
    aclIntArray *ql = ints({3, 7}), *kl = ints({4, 9}), *prefix = ints({0}), *qsi = ints({0}), *kvsi = ints({0});
    char tnd_[] = "TND", same[] = "same_as_input", empty[] = "";
    std::vector<double> mx, sm;
    auto want = ref(seqs, T1, false, Q, K, V, &SK, &mx, &sm);
    for (int lay = 0; lay < 2; lay++) {
        /* [N, T, 8] (""), or [T, N, 8] ("same_as_input") */
        auto stat8 = [&](const std::vector<double> &x) {
            std::vector<double> out(static_cast<size_t>(numel(st)));
            for (int64_t n = 0; n < N1; n++)
                for (int64_t t = 0; t < T1; t++)
                    for (int e = 0; e < 8; e++) out[(lay ? t * N1 + n : n * T1 + t) * 8 + e] = x[n * T1 + t];
            return out;
        };
        char *sl = lay ? same : empty;
        Dev o = make(qs, F, {0}), smax = make(st, F, {0}), ssum = make(st, F, {0});
        RUN(S, aclnnFlashAttentionVarLenScoreV5, q.t, nullptr, k.t, nullptr, v.t, nullptr, nullptr, nullptr, nullptr,
            sink.t, prefix, ql, kl, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 1, sl, smax.t, ssum.t, nullptr,
            o.t);
        compare(lay ? "VarLenScoreV5 sink attentionOut (same_as_input)" : "VarLenScoreV5 sink attentionOut", read(o),
                want, 2e-5);
        compare(lay ? "VarLenScoreV5 softmaxMax [T, N, 8]" : "VarLenScoreV5 softmaxMax [N, T, 8]", read(smax), stat8(mx),
                1e-5);
        compare(lay ? "VarLenScoreV5 softmaxSum [T, N, 8]" : "VarLenScoreV5 softmaxSum [N, T, 8]", read(ssum), stat8(sm),
                1e-5);
        Dev dq = make(qs, F, {0}), dk = make(ks, F, {0}), dv = make(ks, F, {0}), dsink = make({N1}, F, {0});
        Dev dqr = make({0}, F, {}), dkr = make({0}, F, {}), dpse = make({0}, F, {});
        RUN(S, aclnnFlashAttentionUnpaddingScoreGradV5, q.t, nullptr, k.t, nullptr, v.t, dy.t, nullptr, nullptr,
            nullptr, nullptr, smax.t, ssum.t, nullptr, o.t, sink.t, prefix, ql, kl, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1,
            tnd_, 0, 0, 1, sl, dq.t, dqr.t, dk.t, dkr.t, dv.t, dpse.t, dsink.t);
        compare("UnpaddingScoreGradV5 dq", read(dq), fd(seqs, T1, false, Q, K, V, SK, DY, 0), 2e-5);
        compare("UnpaddingScoreGradV5 dk", read(dk), fd(seqs, T1, false, Q, K, V, SK, DY, 1), 2e-5);
        compare("UnpaddingScoreGradV5 dv", read(dv), fd(seqs, T1, false, Q, K, V, SK, DY, 2), 2e-5);
        compare("UnpaddingScoreGradV5 dsink", read(dsink), fd(seqs, T1, false, Q, K, V, SK, DY, 3), 2e-5);
        for (Dev *d : {&o, &smax, &ssum, &dq, &dk, &dv, &dsink, &dqr, &dkr, &dpse}) release(*d);
    }
    printf("ok varlen v5 sink\n");

    /* aclnnFlashAttentionScoreV4 with layout TND equals VarLenScoreV5 */
    {
        Dev o5 = make(qs, F, {0}), x5 = make(st, F, {0}), s5 = make(st, F, {0});
        Dev o4 = make(qs, F, {0}), x4 = make(st, F, {0}), s4 = make(st, F, {0});
        RUN(S, aclnnFlashAttentionVarLenScoreV5, q.t, nullptr, k.t, nullptr, v.t, nullptr, nullptr, nullptr, nullptr,
            sink.t, prefix, ql, kl, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 1, same, x5.t, s5.t, nullptr, o5.t);
        RUN(S, aclnnFlashAttentionScoreV4, q.t, k.t, v.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, sink.t, prefix, ql, kl, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 0, 1, same, 0, 0,
            x4.t, s4.t, nullptr, o4.t);
        compare("ScoreV4 TND equals VarLenScoreV5", read(o4), read(o5), 0);
        compare("ScoreV4 TND softmaxMax [T, N, 8] equals VarLenScoreV5", read(x4), read(x5), 0);
        for (Dev *d : {&o5, &x5, &s5, &o4, &x4, &s4}) release(*d);
        printf("ok score v4 tnd\n");
    }

    /* GetMaxWorkspaceSize: the same checks, an executor that runs like phase 1's */
    {
        uint64_t ws = 99;
        aclOpExecutor *ex = nullptr;
        Dev o = make(qs, F, {0}), smax = make(st, F, {0}), ssum = make(st, F, {0});
        aclnnStatus r = aclnnFlashAttentionVarLenScoreV5GetMaxWorkspaceSize(
            q.t, nullptr, k.t, nullptr, v.t, nullptr, nullptr, nullptr, nullptr, sink.t, prefix, ql, kl, qsi, kvsi,
            SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 1, empty, smax.t, ssum.t, nullptr, o.t, &ws, &ex);
        expect_code("VarLenScoreV5GetMaxWorkspaceSize valid call", r, 0);
        if (r == 0) {
            void *w = nullptr;
            if (ws > 0) CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
            NN(aclnnFlashAttentionVarLenScoreV5(w, ws, ex, S));
            CHECK(aclrtSynchronizeStream(S));
            if (w) aclrtFree(w);
            compare("VarLenScoreV5 through the GetMaxWorkspaceSize executor", read(o), want, 2e-5);
        }
        expect_code("VarLenScoreV5GetMaxWorkspaceSize null key",
                    aclnnFlashAttentionVarLenScoreV5GetMaxWorkspaceSize(
                        q.t, nullptr, nullptr, nullptr, v.t, nullptr, nullptr, nullptr, nullptr, sink.t, prefix, ql, kl,
                        qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 1, empty, smax.t, ssum.t, nullptr, o.t, &ws,
                        &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        Dev dq = make(qs, F, {0}), dk = make(ks, F, {0}), dv = make(ks, F, {0}), dsink = make({N1}, F, {0});
        Dev dqr = make(qs, F, {0});
        r = aclnnFlashAttentionUnpaddingScoreGradV5GetMaxWorkspaceSize(
            q.t, nullptr, k.t, nullptr, v.t, dy.t, nullptr, nullptr, nullptr, nullptr, smax.t, ssum.t, nullptr, o.t,
            sink.t, prefix, ql, kl, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 1, empty, dq.t, nullptr, dk.t,
            nullptr, dv.t, nullptr, dsink.t, &ws, &ex);
        expect_code("UnpaddingScoreGradV5GetMaxWorkspaceSize valid call", r, 0);
        if (r == 0) aclDestroyAclOpExecutor(ex);
        expect_code("UnpaddingScoreGradV5 non-empty dqRopeOut without queryRope",
                    aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
                        q.t, nullptr, k.t, nullptr, v.t, dy.t, nullptr, nullptr, nullptr, nullptr, smax.t, ssum.t,
                        nullptr, o.t, sink.t, prefix, ql, kl, qsi, kvsi, SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 1, empty,
                        dq.t, dqr.t, dk.t, nullptr, dv.t, nullptr, dsink.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("VarLenScoreV5 queryRope (not modelled)",
                    aclnnFlashAttentionVarLenScoreV5GetWorkspaceSize(
                        q.t, q.t, k.t, k.t, v.t, nullptr, nullptr, nullptr, nullptr, sink.t, prefix, ql, kl, qsi, kvsi,
                        SCALE, 1.0, BIG, BIG, N1, tnd_, 0, 0, 1, empty, smax.t, ssum.t, nullptr, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *d : {&o, &smax, &ssum, &dq, &dk, &dv, &dsink, &dqr}) release(*d);
        printf("ok varlen v5 max workspace\n");
    }
    for (aclIntArray *a : {ql, kl, prefix, qsi, kvsi}) aclDestroyIntArray(a);
    for (Dev *d : {&q, &k, &v, &dy, &sink}) release(*d);
}

/* 3. FusedInferAttentionScoreV3/V4GetMaxWorkspaceSize: phase 1's checks and executor */
static void fia_max() {
    const aclDataType F = ACL_FLOAT;
    const int64_t B = 1, S1 = 3, S2 = 5;
    Shape qs{B, N1, S1, D}, ks{B, N2, S2, D};
    std::vector<double> Q = vals(numel(qs), 31), K = vals(numel(ks), 32), V = vals(numel(ks), 33);
    Dev q = make(qs, F, Q), k = make(ks, F, K), v = make(ks, F, V), o = make(qs, F, {0}), lse = make({B, N1, S1, 1}, F, {0});
    aclTensor *kt[] = {k.t}, *vt[] = {v.t};
    aclTensorList *kl = aclCreateTensorList(kt, 1), *vl = aclCreateTensorList(vt, 1);
    char bnsd[] = "BNSD";
    /* BNSD [1, N, S, D] equals TND rows of one sequence only when N = 1; compare through BSND order */
    std::vector<double> Qt(Q.size()), Kt(K.size()), Vt(V.size());
    for (int64_t n = 0; n < N1; n++)
        for (int64_t i = 0; i < S1; i++)
            for (int64_t d = 0; d < D; d++) Qt[(i * N1 + n) * D + d] = Q[(n * S1 + i) * D + d];
    for (int64_t n = 0; n < N2; n++)
        for (int64_t j = 0; j < S2; j++)
            for (int64_t d = 0; d < D; d++) {
                Kt[(j * N2 + n) * D + d] = K[(n * S2 + j) * D + d];
                Vt[(j * N2 + n) * D + d] = V[(n * S2 + j) * D + d];
            }
    auto wt = ref({{0, S1, 0, S2}}, S1, false, Qt, Kt, Vt, nullptr);
    std::vector<double> want(wt.size());
    for (int64_t n = 0; n < N1; n++)
        for (int64_t i = 0; i < S1; i++)
            for (int64_t d = 0; d < D; d++) want[(n * S1 + i) * D + d] = wt[(i * N1 + n) * D + d];
    for (int ver = 3; ver <= 4; ver++) {
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        aclnnStatus r =
            ver == 3 ? aclnnFusedInferAttentionScoreV3GetMaxWorkspaceSize(
                           q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                           nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                           nullptr, nullptr, nullptr, nullptr, nullptr, N1, SCALE, BIG, BIG, bnsd, N2, 0, 0, 0, 0, false,
                           0, 0, o.t, lse.t, &ws, &ex)
                     : aclnnFusedInferAttentionScoreV4GetMaxWorkspaceSize(
                           q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                           nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                           nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, SCALE, BIG, BIG, bnsd, N2,
                           0, 0, 0, 0, false, 0, 0, 0, o.t, lse.t, &ws, &ex);
        expect_code(ver == 3 ? "FusedInferAttentionScoreV3GetMaxWorkspaceSize valid call"
                             : "FusedInferAttentionScoreV4GetMaxWorkspaceSize valid call",
                    r, 0);
        if (r == 0) {
            void *w = nullptr;
            if (ws > 0) CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
            NN((ver == 3 ? aclnnFusedInferAttentionScoreV3 : aclnnFusedInferAttentionScoreV4)(w, ws, ex, S));
            CHECK(aclrtSynchronizeStream(S));
            if (w) aclrtFree(w);
            compare(ver == 3 ? "FusedInferAttentionScoreV3 through the GetMaxWorkspaceSize executor"
                             : "FusedInferAttentionScoreV4 through the GetMaxWorkspaceSize executor",
                    read(o), want, 2e-5);
        }
    }
    {
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        expect_code("FusedInferAttentionScoreV3GetMaxWorkspaceSize null query",
                    aclnnFusedInferAttentionScoreV3GetMaxWorkspaceSize(
                        nullptr, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, N1, SCALE, BIG, BIG, bnsd, N2, 0, 0, 0, 0, false, 0, 0, o.t,
                        lse.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
    }
    aclDestroyTensorList(kl);
    aclDestroyTensorList(vl);
    for (Dev *d : {&o, &lse}) release(*d);
    printf("ok fused infer max workspace\n");
}

/* 4. aclnnNsaCompress / NsaCompressGrad: out[o_b + i] = Σ_l w[l] · x[s_b + i·stride + l] */
static void nsa() {
    const int64_t NN_ = 2, DD = 16, L = 32, ST = 16;
    const std::vector<int64_t> lens = {40, 10, 64}; /* 1, 0 and 3 blocks */
    std::vector<int64_t> ends;
    int64_t t = 0, rows = 0;
    for (int64_t x : lens) {
        ends.push_back(t += x);
        if (x >= L) rows += (x - L) / ST + 1;
    }
    aclIntArray *sl = ints(ends);
    char tnd_[] = "TND", bsnd_[] = "BSND";
    for (aclDataType dt : {ACL_FLOAT16, ACL_BF16}) {
        const char *nm = dt == ACL_FLOAT16 ? "float16" : "bfloat16";
        std::vector<double> X = values(t * NN_ * DD, dt, 41), W = values(L * NN_, dt, 42), G = values(rows * NN_ * DD, dt, 43);
        std::vector<double> O(static_cast<size_t>(rows * NN_ * DD), 0.0), DX(X.size(), 0.0), DW(W.size(), 0.0);
        int64_t s0 = 0, r = 0;
        for (int64_t len : lens) {
            int64_t nb = len >= L ? (len - L) / ST + 1 : 0;
            for (int64_t i = 0; i < nb; i++, r++)
                for (int64_t l = 0; l < L; l++)
                    for (int64_t n = 0; n < NN_; n++)
                        for (int64_t d = 0; d < DD; d++) {
                            int64_t xi = ((s0 + i * ST + l) * NN_ + n) * DD + d, oi = (r * NN_ + n) * DD + d;
                            O[oi] += W[l * NN_ + n] * X[xi];
                            DX[xi] += W[l * NN_ + n] * G[oi];
                            DW[l * NN_ + n] += G[oi] * X[xi];
                        }
            s0 += len;
        }
        for (auto *v : {&O, &DX, &DW})
            for (auto &e : *v) e = as_type(e, dt);
        Dev x = make({t, NN_, DD}, dt, X), w = make({L, NN_}, dt, W), g = make({rows, NN_, DD}, dt, G);
        Dev o = make({rows, NN_, DD}, dt, {0}), dx = make({t, NN_, DD}, dt, {7}), dw = make({L, NN_}, dt, {7});
        RUN(S, aclnnNsaCompress, x.t, w.t, sl, tnd_, L, ST, 0, o.t);
        char what[128];
        snprintf(what, sizeof what, "NsaCompress %s output", nm);
        compare(what, read(o), O, dt == ACL_FLOAT16 ? 1e-3 : 8e-3);
        RUN(S, aclnnNsaCompressGrad, g.t, x.t, w.t, sl, L, ST, 0, tnd_, dx.t, dw.t);
        snprintf(what, sizeof what, "NsaCompressGrad %s inputGrad (zero for the short sequence)", nm);
        compare(what, read(dx), DX, dt == ACL_FLOAT16 ? 1e-3 : 8e-3);
        snprintf(what, sizeof what, "NsaCompressGrad %s weightGrad", nm);
        compare(what, read(dw), DW, dt == ACL_FLOAT16 ? 1e-3 : 8e-3);
        if (dt == ACL_FLOAT16) {
            uint64_t ws = 0;
            aclOpExecutor *ex = nullptr;
            Dev wb = make({L, NN_}, ACL_BF16, {0}), w3 = make({L, NN_ + 1}, dt, {0});
            aclIntArray *bad = ints({t - 1});
            expect_code("NsaCompress bfloat16 weight with a float16 input",
                        aclnnNsaCompressGetWorkspaceSize(x.t, wb.t, sl, tnd_, L, ST, 0, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("NsaCompress weight of N + 1 heads",
                        aclnnNsaCompressGetWorkspaceSize(x.t, w3.t, sl, tnd_, L, ST, 0, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("NsaCompress null actSeqLenOptional",
                        aclnnNsaCompressGetWorkspaceSize(x.t, w.t, nullptr, tnd_, L, ST, 0, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("NsaCompress actSeqLenOptional not ending at T",
                        aclnnNsaCompressGetWorkspaceSize(x.t, w.t, bad, tnd_, L, ST, 0, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("NsaCompress compressStride 8",
                        aclnnNsaCompressGetWorkspaceSize(x.t, w.t, sl, tnd_, L, 8, 0, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("NsaCompress layout BSND",
                        aclnnNsaCompressGetWorkspaceSize(x.t, w.t, sl, bsnd_, L, ST, 0, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("NsaCompress null output",
                        aclnnNsaCompressGetWorkspaceSize(x.t, w.t, sl, tnd_, L, ST, 0, nullptr, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("NsaCompressGrad inputGradOut of the output's shape",
                        aclnnNsaCompressGradGetWorkspaceSize(g.t, x.t, w.t, sl, L, ST, 0, tnd_, o.t, dw.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            aclDestroyIntArray(bad);
            release(wb);
            release(w3);
        }
        for (Dev *d : {&x, &w, &g, &o, &dx, &dw}) release(*d);
    }
    aclDestroyIntArray(sl);
    printf("ok nsa compress\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    bsnd();
    tnd();
    fia_max();
    nsa();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
