/* The inference-attention inputs beyond one plain key and value tensor, against a float64
 * host reference written here from the documented formulas:
 *  - the paged key/value cache (blocktable with blockSize; cache [blockNum, blockSize, H] or,
 *    with layout BNSD, [blockNum, N, blockSize, D]; actualSeqLengths(Kv) required) of
 *    IncreFlashAttentionV3/V4 and FusedInferAttentionScore (V1, V4; incremental and prompt):
 *    the result equals attention over the contiguous cache the blocks spell;
 *  - INT8 key/value with antiquant (x + offset)·scale: IncreFlashAttentionV4's (2, …)
 *    antiquantScale/Offset per-channel and per-tensor, FusedInferAttentionScoreV4's
 *    keyAntiquantScale/Offset and valueAntiquantScale/Offset per-channel (mode 0), per-token (mode 1) and per-head
 *    (mode 2), also over a paged cache;
 *  - the INT8 output (post-quantization round_half_even(attention·quantScale2 + quantOffset2),
 *    saturated) of IncreFlashAttentionV2, PromptFlashAttentionV2 and FusedInferAttentionScoreV4,
 *    per-channel and per-tensor;
 *  - key/value as per-batch tensor lists ([1, S_b, ...] each) of IncreFlashAttention and
 *    FusedInferAttentionScore, against the padded contiguous cache;
 *  - the documented argument errors (ACLNN_ERR_PARAM_INVALID, 161002). */
#include <cmath>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_prompt_flash_attention_v2.h"
#include "aclnnop/aclnn_incre_flash_attention.h"
#include "aclnnop/aclnn_incre_flash_attention_v2.h"
#include "aclnnop/aclnn_incre_flash_attention_v3.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_fused_infer_attention_score.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v4.h"

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

enum Lay { BSH, BSND, BNSD };

static Shape lshape(Lay l, int64_t B, int64_t S_, int64_t N, int64_t D) {
    return l == BSH ? Shape{B, S_, N * D} : l == BSND ? Shape{B, S_, N, D} : Shape{B, N, S_, D};
}

static int64_t loff(Lay l, int64_t S_, int64_t N, int64_t D, int64_t b, int64_t n, int64_t s, int64_t d) {
    return l == BNSD ? ((b * N + n) * S_ + s) * D + d : ((b * S_ + s) * N + n) * D + d;
}

/* softmax(scale·q·kᵀ) v over the keys j < len[b] (rows i < qlen[b] when given), GQA. */
static std::vector<double> att_ref(Lay l, int64_t B, int64_t N1, int64_t N2, int64_t S1, int64_t S2, int64_t D,
                                   double scale, const std::vector<double> &Q, const std::vector<double> &K,
                                   const std::vector<double> &V, const std::vector<int64_t> &len) {
    std::vector<double> O(static_cast<size_t>(B * N1 * S1 * D), 0.0);
    int64_t g = N1 / N2;
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N1; n++)
            for (int64_t i = 0; i < S1; i++) {
                std::vector<double> s(S2);
                double m = -INFINITY, sum = 0;
                for (int64_t j = 0; j < len[b]; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < D; d++)
                        dot += Q[loff(l, S1, N1, D, b, n, i, d)] * K[loff(l, S2, N2, D, b, n / g, j, d)];
                    s[j] = scale * dot;
                    m = std::max(m, s[j]);
                }
                for (int64_t j = 0; j < len[b]; j++) sum += std::exp(s[j] - m);
                for (int64_t j = 0; j < len[b]; j++)
                    for (int64_t d = 0; d < D; d++)
                        O[loff(l, S1, N1, D, b, n, i, d)] += std::exp(s[j] - m) / sum * V[loff(l, S2, N2, D, b, n / g, j, d)];
            }
    return O;
}

/* A paged cache holding the logical [B, S2, N2, D] tensor X (layout l): block table rows
 * `table` (-1 past a batch's blocks), blockNum blocks of bs, 3-D [blockNum, bs, N2·D] or
 * 4-D [blockNum, N2, bs, D]. Unused slots hold 99 (never read). */
static std::vector<double> paged(const std::vector<double> &X, Lay l, int64_t B, int64_t S2, int64_t N2, int64_t D,
                                 const std::vector<int64_t> &table, int64_t cols, int64_t blockNum, int64_t bs,
                                 bool four, const std::vector<int64_t> &len) {
    std::vector<double> c(static_cast<size_t>(blockNum * bs * N2 * D), 99.0);
    for (int64_t b = 0; b < B; b++)
        for (int64_t s = 0; s < len[b]; s++) {
            int64_t blk = table[b * cols + s / bs], w = s % bs;
            for (int64_t n = 0; n < N2; n++)
                for (int64_t d = 0; d < D; d++) {
                    int64_t at = four ? ((blk * N2 + n) * bs + w) * D + d : (blk * bs + w) * N2 * D + n * D + d;
                    c[at] = X[loff(l, S2, N2, D, b, n, s, d)];
                }
        }
    return c;
}

static std::vector<double> as_f(const std::vector<int64_t> &v) { return std::vector<double>(v.begin(), v.end()); }

/* ---------------------------------------------------------------- paged cache */

static void paged_cache() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t B = 2, N1 = 4, N2 = 2, D = 8, bs = 4, cols = 3, S2 = cols * bs, blockNum = 7;
    std::vector<int64_t> table = {5, 1, 3, 0, 6, -1}, len = {10, 5};
    int64_t lens[] = {10, 5};
    aclIntArray *al = aclCreateIntArray(lens, 2);
    Dev tb = make({B, cols}, ACL_INT32, as_f(table));
    /* IncreFlashAttentionV3/V4: BSH and BSND over [blockNum, bs, H], BNSD over both forms */
    struct Case { Lay l; bool four; const char *name; };
    for (aclDataType t : {ACL_FLOAT16, ACL_BF16})
        for (Case c : {Case{BSH, false, "BSH"}, Case{BSND, false, "BSND"}, Case{BNSD, false, "BNSD"},
                       Case{BNSD, true, "BNSD 4-D cache"}}) {
            Shape qs = lshape(c.l, B, 1, N1, D), ks = lshape(c.l, B, S2, N2, D);
            std::vector<double> Q = vals(numel(qs), t, 31), K = vals(numel(ks), t, 32), V = vals(numel(ks), t, 33);
            Shape cs = c.four ? Shape{blockNum, N2, bs, D} : Shape{blockNum, bs, N2 * D};
            Dev q = make(qs, t, Q), kc = make(cs, t, paged(K, c.l, B, S2, N2, D, table, cols, blockNum, bs, c.four, len)),
                vc = make(cs, t, paged(V, c.l, B, S2, N2, D, table, cols, blockNum, bs, c.four, len));
            Dev o3 = make(qs, t, {0}), o4 = make(qs, t, {0});
            aclTensorList *kl = aclCreateTensorList(&kc.t, 1), *vl = aclCreateTensorList(&vc.t, 1);
            char lay[8];
            snprintf(lay, sizeof lay, "%s", c.l == BSH ? "BSH" : c.l == BSND ? "BSND" : "BNSD");
            RUN(S, aclnnIncreFlashAttentionV3, q.t, kl, vl, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, tb.t, N1, 0.3, lay, N2, bs, 1, o3.t);
            RUN(S, aclnnIncreFlashAttentionV4, q.t, kl, vl, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, tb.t, nullptr, N1, 0.3, lay, N2, bs, 1, o4.t);
            auto want = att_ref(c.l, B, N1, N2, 1, S2, D, 0.3, Q, K, V, len);
            char what[128];
            snprintf(what, sizeof what, "IncreFlashAttentionV3 paged %s %s", c.name, dname(t));
            compare(what, read(o3), want, 1e-2);
            snprintf(what, sizeof what, "IncreFlashAttentionV4 paged %s %s", c.name, dname(t));
            compare(what, read(o4), want, 1e-2);
            aclDestroyTensorList(kl);
            aclDestroyTensorList(vl);
            for (Dev *d : {&q, &o3, &o4}) release(*d);
            if (kc.mem) aclrtFree(kc.mem);
            if (vc.mem) aclrtFree(vc.mem);
        }
    /* FusedInferAttentionScore: V1 incremental BNSD 4-D cache with the lse; V4 prompt BSH
     * (query length 3, query lengths (3, 2)) over a 3-D cache */
    for (int64_t S1 : {1, 3}) {
        aclDataType t = ACL_FLOAT16;
        Lay l = S1 == 1 ? BNSD : BSH;
        bool four = S1 == 1;
        Shape qs = lshape(l, B, S1, N1, D), ks = lshape(l, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), t, 41), K = vals(numel(ks), t, 42), V = vals(numel(ks), t, 43);
        Shape cs = four ? Shape{blockNum, N2, bs, D} : Shape{blockNum, bs, N2 * D};
        Dev q = make(qs, t, Q), kc = make(cs, t, paged(K, l, B, S2, N2, D, table, cols, blockNum, bs, four, len)),
            vc = make(cs, t, paged(V, l, B, S2, N2, D, table, cols, blockNum, bs, four, len));
        Dev o = make(qs, t, {0}), lse = make({B, N1, S1, 1}, ACL_FLOAT, {0});
        aclTensorList *kl = aclCreateTensorList(&kc.t, 1), *vl = aclCreateTensorList(&vc.t, 1);
        char lay[8];
        snprintf(lay, sizeof lay, "%s", l == BSH ? "BSH" : "BNSD");
        auto want = att_ref(l, B, N1, N2, S1, S2, D, 0.35, Q, K, V, len);
        if (S1 == 1) {
            RUN(S, aclnnFusedInferAttentionScore, q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, tb.t, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 1, bs, 0,
                false, o.t, lse.t);
            compare("FusedInferAttentionScore paged incremental BNSD 4-D cache", read(o), want, 1e-2);
        } else {
            RUN(S, aclnnFusedInferAttentionScoreV4, q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, tb.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 1, bs, 0,
                false, 0, 0, 0, o.t, lse.t);
            compare("FusedInferAttentionScoreV4 paged prompt BSH 3-D cache", read(o), want, 1e-2);
        }
        if (S1 == 1) {
            expect_code("FusedInferAttentionScore paged without actualSeqLengthsKv",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, tb.t, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 1, bs, 0, false,
                            o.t, lse.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FusedInferAttentionScore paged with blockSize 0",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, tb.t, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 1, 0, 0, false,
                            o.t, lse.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FusedInferAttentionScore paged with a cache of another block size",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, tb.t, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 1, 8, 0, false,
                            o.t, lse.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            Dev tbad = make({B, cols}, ACL_INT64, as_f(table));
            expect_code("FusedInferAttentionScore paged with an INT64 block table",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, tbad.t, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 1, bs, 0, false,
                            o.t, lse.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            release(tbad);
        }
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        for (Dev *d : {&q, &o, &lse}) release(*d);
        if (kc.mem) aclrtFree(kc.mem);
        if (vc.mem) aclrtFree(vc.mem);
    }
    /* a block id outside the cache fails at launch, not silently */
    {
        Shape qs = lshape(BSH, B, 1, N1, D);
        std::vector<int64_t> bad = {5, 1, 9, 0, 6, -1};
        Dev q = make(qs, ACL_FLOAT16, vals(numel(qs), ACL_FLOAT16, 5)), kc = make({blockNum, bs, N2 * D}, ACL_FLOAT16, {0.5}),
            vc = make({blockNum, bs, N2 * D}, ACL_FLOAT16, {0.5}), o = make(qs, ACL_FLOAT16, {0});
        Dev tbb = make({B, cols}, ACL_INT32, as_f(bad));
        aclTensorList *kl = aclCreateTensorList(&kc.t, 1), *vl = aclCreateTensorList(&vc.t, 1);
        char lay[] = "BSH";
        aclnnStatus st = aclnnIncreFlashAttentionV3GetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, al, nullptr, nullptr,
                                                                    nullptr, nullptr, nullptr, nullptr, nullptr, tbb.t,
                                                                    N1, 0.3, lay, N2, bs, 1, o.t, &ws, &ex);
        bool failed = st != 0;
        if (!failed) {
            void *w = nullptr;
            if (ws) CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
            st = aclnnIncreFlashAttentionV3(w, ws, ex, S);
            failed = st != 0 || aclrtSynchronizeStream(S) != 0;
            if (w) aclrtFree(w);
        }
        g_checks++;
        if (!failed) {
            printf("FAIL IncreFlashAttentionV3 block id 9 of 7 blocks ran\n");
            g_fail++;
        } else {
            printf("error IncreFlashAttentionV3 block id 9 of 7 blocks: %s\n", test_msg());
        }
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        for (Dev *d : {&q, &o, &tbb}) release(*d);
        aclrtFree(kc.mem);
        aclrtFree(vc.mem);
    }
    aclDestroyIntArray(al);
    release(tb);
    printf("ok paged\n");
}

/* ---------------------------------------------------------------- antiquant */

static std::vector<double> int8s(int64_t n, unsigned seed) {
    std::vector<double> v = values(n, ACL_FLOAT, seed);
    for (auto &e : v) e = std::round(e * 40.0);
    for (auto &e : v) e = std::max(-127.0, std::min(127.0, e));
    return v;
}

static void antiquant() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t B = 2, N1 = 4, N2 = 2, D = 8, S2 = 6;
    std::vector<int64_t> len = {6, 4};
    int64_t lens[] = {6, 4};
    aclIntArray *al = aclCreateIntArray(lens, 2);
    aclDataType t = ACL_FLOAT16;
    Lay l = BNSD;
    Shape qs = lshape(l, B, 1, N1, D), ks = lshape(l, B, S2, N2, D);
    std::vector<double> Q = vals(numel(qs), t, 51), K8 = int8s(numel(ks), 52), V8 = int8s(numel(ks), 53);
    Dev q = make(qs, t, Q), k = make(ks, ACL_INT8, K8), v = make(ks, ACL_INT8, V8), o = make(qs, t, {0});
    aclTensorList *kl = aclCreateTensorList(&k.t, 1), *vl = aclCreateTensorList(&v.t, 1);
    char lay[] = "BNSD";
    /* IncreFlashAttentionV4: per-channel (2, N2, 1, D) scale and offset; per-tensor (2) scale */
    {
        std::vector<double> sc(2 * N2 * D), of(2 * N2 * D);
        for (size_t i = 0; i < sc.size(); i++) {
            sc[i] = as_type(0.01 + 0.002 * static_cast<double>(i % 11), t);
            of[i] = as_type(static_cast<double>(i % 5) - 2.0, t);
        }
        Dev s = make({2, N2, 1, D}, t, sc), of_ = make({2, N2, 1, D}, t, of);
        RUN(S, aclnnIncreFlashAttentionV4, q.t, kl, vl, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr, nullptr,
            s.t, of_.t, nullptr, nullptr, N1, 0.3, lay, N2, 0, 1, o.t);
        std::vector<double> K(K8.size()), V(V8.size());
        for (int64_t b = 0; b < B; b++)
            for (int64_t n = 0; n < N2; n++)
                for (int64_t j = 0; j < S2; j++)
                    for (int64_t d = 0; d < D; d++) {
                        int64_t at = loff(l, S2, N2, D, b, n, j, d), c = n * D + d;
                        K[at] = (K8[at] + of[c]) * sc[c];
                        V[at] = (V8[at] + of[N2 * D + c]) * sc[N2 * D + c];
                    }
        compare("IncreFlashAttentionV4 INT8 key/value per-channel antiquant with offset", read(o),
                att_ref(l, B, N1, N2, 1, S2, D, 0.3, Q, K, V, len), 3e-3);
        Dev st = make({2}, t, {0.02, 0.03});
        RUN(S, aclnnIncreFlashAttentionV4, q.t, kl, vl, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr, nullptr,
            st.t, nullptr, nullptr, nullptr, N1, 0.3, lay, N2, 0, 1, o.t);
        for (size_t i = 0; i < K.size(); i++) {
            K[i] = K8[i] * as_type(0.02, t);
            V[i] = V8[i] * as_type(0.03, t);
        }
        compare("IncreFlashAttentionV4 INT8 key/value per-tensor antiquant", read(o),
                att_ref(l, B, N1, N2, 1, S2, D, 0.3, Q, K, V, len), 3e-3);
        expect_code("IncreFlashAttentionV4 INT8 key/value without antiquantScale",
                    aclnnIncreFlashAttentionV4GetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, al, nullptr, nullptr, nullptr,
                                                               nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3,
                                                               lay, N2, 0, 1, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        Dev bad = make({2, 3}, t, {0.1});
        expect_code("IncreFlashAttentionV4 antiquantScale of 3 channels",
                    aclnnIncreFlashAttentionV4GetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, al, nullptr, nullptr, nullptr,
                                                               nullptr, nullptr, bad.t, nullptr, nullptr, nullptr, N1, 0.3,
                                                               lay, N2, 0, 1, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *d : {&s, &of_, &st, &bad}) release(*d);
    }
    /* FusedInferAttentionScoreV4: key per-channel (1, N2, 1, D) (mode 0), value per-token
     * (1, B, S2) FLOAT32 (mode 1); then key and value per-head (N2) (mode 2) */
    {
        std::vector<double> ksc(N2 * D), vsc(B * S2), vof(B * S2);
        for (size_t i = 0; i < ksc.size(); i++) ksc[i] = as_type(0.01 + 0.001 * static_cast<double>(i), t);
        for (size_t i = 0; i < vsc.size(); i++) {
            vsc[i] = as_type(0.005 * static_cast<double>(i + 1), ACL_FLOAT);
            vof[i] = static_cast<double>(i % 3);
        }
        Dev kscd = make({1, N2, 1, D}, t, ksc), vscd = make({1, B, S2}, ACL_FLOAT, vsc), vofd = make({1, B, S2}, ACL_FLOAT, vof);
        Dev lse = make({B, N1, 1, 1}, ACL_FLOAT, {0});
        RUN(S, aclnnFusedInferAttentionScoreV4, q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, kscd.t, nullptr, vscd.t, vofd.t, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3, BIG, BIG, lay, N2, 0, 1, 0, 0, false,
            0, 1, 0, o.t, lse.t);
        std::vector<double> K(K8.size()), V(V8.size());
        for (int64_t b = 0; b < B; b++)
            for (int64_t n = 0; n < N2; n++)
                for (int64_t j = 0; j < S2; j++)
                    for (int64_t d = 0; d < D; d++) {
                        int64_t at = loff(l, S2, N2, D, b, n, j, d);
                        K[at] = K8[at] * ksc[n * D + d];
                        V[at] = (V8[at] + vof[b * S2 + j]) * vsc[b * S2 + j];
                    }
        compare("FusedInferAttentionScoreV4 key per-channel, value per-token antiquant", read(o),
                att_ref(l, B, N1, N2, 1, S2, D, 0.3, Q, K, V, len), 3e-3);
        std::vector<double> hs = {0.02, 0.015};
        Dev hsd = make({N2}, t, hs);
        RUN(S, aclnnFusedInferAttentionScoreV4, q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, hsd.t, nullptr, hsd.t, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3, BIG, BIG, lay, N2, 0, 1, 0, 0, false,
            2, 2, 0, o.t, lse.t);
        for (int64_t b = 0; b < B; b++)
            for (int64_t n = 0; n < N2; n++)
                for (int64_t j = 0; j < S2; j++)
                    for (int64_t d = 0; d < D; d++) {
                        int64_t at = loff(l, S2, N2, D, b, n, j, d);
                        K[at] = K8[at] * as_type(hs[n], t);
                        V[at] = V8[at] * as_type(hs[n], t);
                    }
        compare("FusedInferAttentionScoreV4 per-head antiquant (mode 2)", read(o),
                att_ref(l, B, N1, N2, 1, S2, D, 0.3, Q, K, V, len), 3e-3);
        expect_code("FusedInferAttentionScoreV4 key antiquant without the value's",
                    aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
                        q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, kscd.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3, BIG, BIG, lay, N2, 0, 1, 0, 0, false, 0, 0,
                        0, o.t, lse.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("FusedInferAttentionScoreV4 antiquant mode 6 (per-token-group)",
                    aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
                        q.t, kl, vl, nullptr, nullptr, nullptr, al, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, kscd.t, nullptr, kscd.t, nullptr, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3, BIG, BIG, lay, N2, 0, 1, 0, 0, false, 6, 6,
                        0, o.t, lse.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        for (Dev *d : {&kscd, &vscd, &vofd, &lse, &hsd}) release(*d);
    }
    /* paged INT8 cache with FusedInferAttentionScore V1's antiquantScale (2, N2·D) per-channel */
    {
        const int64_t bs = 4, cols = 2, SP = cols * bs, blockNum = 5;
        std::vector<int64_t> table = {3, 0, 4, -1}, plen = {7, 3};
        int64_t pl[] = {7, 3};
        aclIntArray *pal = aclCreateIntArray(pl, 2);
        Lay lb = BSH;
        Shape q2s = lshape(lb, B, 1, N1, D), k2s = lshape(lb, B, SP, N2, D);
        std::vector<double> Q2 = vals(numel(q2s), t, 61), Kq = int8s(numel(k2s), 62), Vq = int8s(numel(k2s), 63);
        std::vector<double> sc(2 * N2 * D);
        for (size_t i = 0; i < sc.size(); i++) sc[i] = as_type(0.004 * static_cast<double>(i % 7 + 1), t);
        Dev q2 = make(q2s, t, Q2), o2 = make(q2s, t, {0}), lse = make({B, N1, 1, 1}, ACL_FLOAT, {0});
        Dev kc = make({blockNum, bs, N2 * D}, ACL_INT8, paged(Kq, lb, B, SP, N2, D, table, cols, blockNum, bs, false, plen));
        Dev vc = make({blockNum, bs, N2 * D}, ACL_INT8, paged(Vq, lb, B, SP, N2, D, table, cols, blockNum, bs, false, plen));
        Dev s = make({2, N2 * D}, t, sc), tb = make({B, cols}, ACL_INT32, as_f(table));
        aclTensorList *kl2 = aclCreateTensorList(&kc.t, 1), *vl2 = aclCreateTensorList(&vc.t, 1);
        char bsh[] = "BSH";
        RUN(S, aclnnFusedInferAttentionScore, q2.t, kl2, vl2, nullptr, nullptr, nullptr, pal, nullptr, nullptr, nullptr,
            nullptr, nullptr, s.t, nullptr, tb.t, nullptr, nullptr, N1, 0.3, BIG, BIG, bsh, N2, 0, 1, bs, 0, false, o2.t,
            lse.t);
        std::vector<double> K(Kq.size()), V(Vq.size());
        for (int64_t b = 0; b < B; b++)
            for (int64_t n = 0; n < N2; n++)
                for (int64_t j = 0; j < SP; j++)
                    for (int64_t d = 0; d < D; d++) {
                        int64_t at = loff(lb, SP, N2, D, b, n, j, d), c = n * D + d;
                        K[at] = Kq[at] * sc[c];
                        V[at] = Vq[at] * sc[N2 * D + c];
                    }
        compare("FusedInferAttentionScore paged INT8 cache with per-channel antiquant", read(o2),
                att_ref(lb, B, N1, N2, 1, SP, D, 0.3, Q2, K, V, plen), 3e-3);
        aclDestroyTensorList(kl2);
        aclDestroyTensorList(vl2);
        aclDestroyIntArray(pal);
        for (Dev *d : {&q2, &o2, &lse, &s, &tb}) release(*d);
        if (kc.mem) aclrtFree(kc.mem);
        if (vc.mem) aclrtFree(vc.mem);
    }
    aclDestroyTensorList(kl);
    aclDestroyTensorList(vl);
    aclDestroyIntArray(al);
    release(q);
    release(o);
    if (k.mem) aclrtFree(k.mem);
    if (v.mem) aclrtFree(v.mem);
    printf("ok antiquant\n");
}

/* ---------------------------------------------------------------- INT8 output */

static std::vector<double> quant_ref(const std::vector<double> &A, Lay l, int64_t B, int64_t S1, int64_t N, int64_t D,
                                     const std::vector<double> &sc, const std::vector<double> &of) {
    std::vector<double> r(A.size());
    for (int64_t b = 0; b < B; b++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t s = 0; s < S1; s++)
                for (int64_t d = 0; d < D; d++) {
                    int64_t at = loff(l, S1, N, D, b, n, s, d);
                    size_t c = sc.size() == 1 ? 0 : static_cast<size_t>(n * D + d);
                    double x = A[at] * sc[c] + (of.empty() ? 0.0 : of[c]);
                    r[at] = std::max(-128.0, std::min(127.0, std::nearbyint(x)));
                }
    return r;
}

static void post_quant() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t B = 2, N1 = 4, N2 = 2, D = 8, S2 = 6;
    aclDataType t = ACL_FLOAT16;
    std::vector<int64_t> full = {S2, S2};
    /* IncreFlashAttentionV2 BSH, per-channel [H] FLOAT32 scale and offset */
    {
        Shape qs = lshape(BSH, B, 1, N1, D), ks = lshape(BSH, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), t, 71), K = vals(numel(ks), t, 72), V = vals(numel(ks), t, 73);
        std::vector<double> sc(N1 * D), of(N1 * D);
        for (size_t i = 0; i < sc.size(); i++) {
            sc[i] = 200.0 + 150.0 * static_cast<double>(i % 9);
            of[i] = static_cast<double>(i % 7) - 3.0;
        }
        Dev q = make(qs, t, Q), k = make(ks, t, K), v = make(ks, t, V), o = make(qs, ACL_INT8, {0});
        Dev s = make({N1 * D}, ACL_FLOAT, sc), off = make({N1 * D}, ACL_FLOAT, of);
        aclTensorList *kl = aclCreateTensorList(&k.t, 1), *vl = aclCreateTensorList(&v.t, 1);
        char lay[] = "BSH";
        RUN(S, aclnnIncreFlashAttentionV2, q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, s.t, off.t,
            N1, 0.3, lay, N2, o.t);
        auto a = att_ref(BSH, B, N1, N2, 1, S2, D, 0.3, Q, K, V, full);
        auto want = quant_ref(a, BSH, B, 1, N1, D, sc, of);
        compare("IncreFlashAttentionV2 INT8 output, per-channel quantScale2/quantOffset2", read(o), want, 1e-9);
        int clipped = 0;
        for (double x : want) clipped += x == 127.0 || x == -128.0;
        g_checks++;
        if (clipped == 0) {
            printf("FAIL IncreFlashAttentionV2 INT8 output: the case saturates nothing\n");
            g_fail++;
        }
        Dev o16 = make(qs, t, {0});
        expect_code("IncreFlashAttentionV2 quantScale2 with a FLOAT16 attentionOut",
                    aclnnIncreFlashAttentionV2GetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                               nullptr, s.t, nullptr, N1, 0.3, lay, N2, o16.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("IncreFlashAttentionV2 INT8 attentionOut without quantScale2",
                    aclnnIncreFlashAttentionV2GetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                               nullptr, nullptr, nullptr, N1, 0.3, lay, N2, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        Dev s16 = make({N1 * D}, ACL_FLOAT16, sc);
        expect_code("IncreFlashAttentionV2 FLOAT16 quantScale2 with a FLOAT16 query",
                    aclnnIncreFlashAttentionV2GetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                               nullptr, s16.t, nullptr, N1, 0.3, lay, N2, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        for (Dev *d : {&q, &o, &s, &off, &o16, &s16}) release(*d);
        if (k.mem) aclrtFree(k.mem);
        if (v.mem) aclrtFree(v.mem);
    }
    /* PromptFlashAttentionV2 and FusedInferAttentionScoreV4 (BNSD, query length 5), per-tensor */
    {
        const int64_t S1 = 5;
        Shape qs = lshape(BNSD, B, S1, N1, D), ks = lshape(BNSD, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), t, 81), K = vals(numel(ks), t, 82), V = vals(numel(ks), t, 83);
        std::vector<double> sc = {150.0}, of = {2.0};
        Dev q = make(qs, t, Q), k = make(ks, t, K), v = make(ks, t, V), o = make(qs, ACL_INT8, {0}),
            o4 = make(qs, ACL_INT8, {0}), lse = make({B, N1, S1, 1}, ACL_FLOAT, {0});
        Dev s = make({1}, ACL_FLOAT, sc), off = make({1}, ACL_FLOAT, of);
        aclTensorList *kl = aclCreateTensorList(&k.t, 1), *vl = aclCreateTensorList(&v.t, 1);
        char lay[] = "BNSD";
        RUN(S, aclnnPromptFlashAttentionV2, q.t, k.t, v.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            s.t, off.t, N1, 0.3, BIG, BIG, lay, N2, 0, o.t);
        RUN(S, aclnnFusedInferAttentionScoreV4, q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            s.t, off.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3, BIG, BIG, lay, N2, 0, 1, 0, 0, false, 0, 0, 0,
            o4.t, lse.t);
        auto a = att_ref(BNSD, B, N1, N2, S1, S2, D, 0.3, Q, K, V, full);
        auto want = quant_ref(a, BNSD, B, S1, N1, D, sc, of);
        compare("PromptFlashAttentionV2 INT8 output, per-tensor quantScale2/quantOffset2", read(o), want, 1e-9);
        compare("FusedInferAttentionScoreV4 INT8 output, per-tensor quantScale2/quantOffset2", read(o4), want, 1e-9);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        for (Dev *d : {&q, &o, &o4, &lse, &s, &off}) release(*d);
        if (k.mem) aclrtFree(k.mem);
        if (v.mem) aclrtFree(v.mem);
    }
    printf("ok post quant\n");
}

/* ---------------------------------------------------------------- per-batch key/value lists */

static void kv_list() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t B = 2, N1 = 4, N2 = 2, D = 8;
    aclDataType t = ACL_FLOAT16;
    for (Lay l : {BSH, BNSD}) {
        const int64_t sb[2] = {7, 4}, S2 = 7;
        Shape qs = lshape(l, B, 1, N1, D), ks = lshape(l, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), t, 91), K = vals(numel(ks), t, 92), V = vals(numel(ks), t, 93);
        /* batch b's tensor holds keys 0..sb[b] of the padded K */
        std::vector<Dev> kd, vd;
        for (int64_t b = 0; b < B; b++) {
            Shape s1 = lshape(l, 1, sb[b], N2, D);
            std::vector<double> kb(numel(s1)), vb(numel(s1));
            for (int64_t n = 0; n < N2; n++)
                for (int64_t j = 0; j < sb[b]; j++)
                    for (int64_t d = 0; d < D; d++) {
                        kb[loff(l, sb[b], N2, D, 0, n, j, d)] = K[loff(l, S2, N2, D, b, n, j, d)];
                        vb[loff(l, sb[b], N2, D, 0, n, j, d)] = V[loff(l, S2, N2, D, b, n, j, d)];
                    }
            kd.push_back(make(s1, t, kb));
            vd.push_back(make(s1, t, vb));
        }
        aclTensor *kt[2] = {kd[0].t, kd[1].t}, *vt[2] = {vd[0].t, vd[1].t};
        aclTensorList *kl = aclCreateTensorList(kt, 2), *vl = aclCreateTensorList(vt, 2);
        Dev q = make(qs, t, Q), o = make(qs, t, {0}), lse = make({B, N1, 1, 1}, ACL_FLOAT, {0});
        char lay[8];
        snprintf(lay, sizeof lay, "%s", l == BSH ? "BSH" : "BNSD");
        int64_t al[] = {5, 4};
        aclIntArray *acl = aclCreateIntArray(al, 2);
        if (l == BSH) {
            RUN(S, aclnnIncreFlashAttention, q.t, kl, vl, nullptr, nullptr, acl, N1, 0.3, lay, N2, o.t);
            compare("IncreFlashAttention per-batch key/value lists (S 7, 4), actualSeqLengths (5, 4)", read(o),
                    att_ref(l, B, N1, N2, 1, S2, D, 0.3, Q, K, V, {5, 4}), 3e-3);
            int64_t big[] = {5, 6};
            aclIntArray *bad = aclCreateIntArray(big, 2);
            expect_code("IncreFlashAttention actualSeqLengths past a batch's key tensor",
                        aclnnIncreFlashAttentionGetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, bad, N1, 0.3, lay, N2, o.t,
                                                                 &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            aclDestroyIntArray(bad);
        } else {
            RUN(S, aclnnFusedInferAttentionScore, q.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3, BIG, BIG, lay, N2, 0, 1,
                0, 0, false, o.t, lse.t);
            compare("FusedInferAttentionScore per-batch key/value lists (S 7, 4)", read(o),
                    att_ref(l, B, N1, N2, 1, S2, D, 0.3, Q, K, V, {7, 4}), 3e-3);
        }
        aclDestroyIntArray(acl);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        for (Dev *d : {&q, &o, &lse}) release(*d);
        for (auto &d : kd) aclrtFree(d.mem);
        for (auto &d : vd) aclrtFree(d.mem);
    }
    /* lists whose head dims differ */
    {
        Shape qs = lshape(BNSD, B, 1, N1, D);
        Dev q = make(qs, t, vals(numel(qs), t, 3)), o = make(qs, t, {0});
        Dev k0 = make({1, N2, 5, D}, t, {0.1}), k1 = make({1, N2, 5, 16}, t, {0.1});
        Dev v0 = make({1, N2, 5, D}, t, {0.1}), v1 = make({1, N2, 5, 16}, t, {0.1});
        aclTensor *kt[2] = {k0.t, k1.t}, *vt[2] = {v0.t, v1.t};
        aclTensorList *kl = aclCreateTensorList(kt, 2), *vl = aclCreateTensorList(vt, 2);
        char lay[] = "BNSD";
        expect_code("IncreFlashAttention per-batch lists with different head dims",
                    aclnnIncreFlashAttentionGetWorkspaceSize(q.t, kl, vl, nullptr, nullptr, nullptr, N1, 0.3, lay, N2, o.t,
                                                             &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        for (Dev *d : {&q, &o}) release(*d);
        for (Dev *d : {&k0, &k1, &v0, &v1}) aclrtFree(d->mem);
    }
    printf("ok kv list\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    paged_cache();
    antiquant();
    post_quant();
    kv_list();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
