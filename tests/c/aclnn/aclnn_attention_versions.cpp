/* The older and other versions of the attention operators, called as CANN's operator
 * reference calls them, against a float64 host reference written here from the documented
 * formulas and against the newer version where the two compute the same thing:
 * PromptFlashAttention (V1, V2 = V3), IncreFlashAttention (V1, V2, V3 = V4),
 * FusedInferAttentionScore (V1, V4 = V3, prompt and incremental, with the log-sum-exp),
 * FlashAttentionScoreV2 (pseType 1 = FlashAttentionScore, pseType 0 = pse after the scale)
 * and FlashAttentionScoreGradV2 (pseType 1 = FlashAttentionScoreGrad, pseType 0 against
 * central finite differences of the reference forward). Each has the documented argument
 * errors: a null required tensor gives ACLNN_ERR_PARAM_NULLPTR (161001), a layout, shape or
 * attribute outside the documented range ACLNN_ERR_PARAM_INVALID (161002). */
#include <cmath>
#include <functional>
#include "ops_ref.h"
#include "aclnnop/aclnn_prompt_flash_attention.h"
#include "aclnnop/aclnn_prompt_flash_attention_v2.h"
#include "aclnnop/aclnn_prompt_flash_attention_v3.h"
#include "aclnnop/aclnn_incre_flash_attention.h"
#include "aclnnop/aclnn_incre_flash_attention_v2.h"
#include "aclnnop/aclnn_incre_flash_attention_v3.h"
#include "aclnnop/aclnn_incre_flash_attention_v4.h"
#include "aclnnop/aclnn_fused_infer_attention_score.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v3.h"
#include "aclnnop/aclnn_fused_infer_attention_score_v4.h"
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

static double tol_of(aclDataType t) { return t == ACL_FLOAT ? 1e-5 : 2e-3; }

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

/* One attention call: query/key layout `li`, output layout `lo`, a pse `P` ([B, N1, S1, S2],
 * empty for none) added after the scale (`after`) or before it, `masked(b, n, i, j)`. */
struct Att {
    Lay li, lo;
    int64_t B, N1, N2, S1, S2, D;
    double scale;
    bool after = true;
};

using Mask = std::function<bool(int64_t, int64_t, int64_t, int64_t)>;

/* The output and each row's max and sum of exponentials (-inf and 0 for a fully masked row,
 * whose output is zero). */
static std::vector<double> att_ref(const Att &a, const std::vector<double> &Q, const std::vector<double> &K,
                                   const std::vector<double> &V, const std::vector<double> &P, const Mask &masked,
                                   std::vector<double> *mx = nullptr, std::vector<double> *sm = nullptr) {
    std::vector<double> O(static_cast<size_t>(a.B * a.N1 * a.S1 * a.D), 0.0);
    if (mx) mx->assign(static_cast<size_t>(a.B * a.N1 * a.S1), -INFINITY);
    if (sm) sm->assign(static_cast<size_t>(a.B * a.N1 * a.S1), 0.0);
    int64_t g = a.N1 / a.N2;
    for (int64_t b = 0; b < a.B; b++)
        for (int64_t n = 0; n < a.N1; n++)
            for (int64_t i = 0; i < a.S1; i++) {
                std::vector<double> s(a.S2);
                double m = -INFINITY;
                for (int64_t j = 0; j < a.S2; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < a.D; d++)
                        dot += Q[loff(a.li, a.S1, a.N1, a.D, b, n, i, d)] * K[loff(a.li, a.S2, a.N2, a.D, b, n / g, j, d)];
                    double p = P.empty() ? 0 : P[((b * a.N1 + n) * a.S1 + i) * a.S2 + j];
                    s[j] = a.after ? a.scale * dot + p : a.scale * (dot + p);
                    if (!masked(b, n, i, j)) m = std::max(m, s[j]);
                }
                double sum = 0;
                for (int64_t j = 0; j < a.S2; j++)
                    if (!masked(b, n, i, j)) sum += std::exp(s[j] - m);
                size_t r = static_cast<size_t>((b * a.N1 + n) * a.S1 + i);
                if (mx) (*mx)[r] = m;
                if (sm) (*sm)[r] = sum;
                for (int64_t j = 0; j < a.S2; j++) {
                    if (masked(b, n, i, j)) continue;
                    double p = std::exp(s[j] - m) / sum;
                    for (int64_t d = 0; d < a.D; d++)
                        O[loff(a.lo, a.S1, a.N1, a.D, b, n, i, d)] += p * V[loff(a.li, a.S2, a.N2, a.D, b, n / g, j, d)];
                }
            }
    return O;
}

/* ---------------------------------------------------------------- PromptFlashAttention */

static void prompt() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t B = 2, N1 = 4, N2 = 2, S1 = 5, S2 = 7, D = 8;
    /* V1: BSH, grouped key heads, a [S1, S2] mask with nextTokens 1, query lengths (4, 5) */
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        Shape qs = lshape(BSH, B, S1, N1, D), ks = lshape(BSH, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), t, 1), K = vals(numel(ks), t, 2), V = vals(numel(ks), t, 3);
        std::vector<double> M(static_cast<size_t>(S1 * S2), 0.0);
        M[2] = 1;
        M[S2 + 4] = 1;
        Dev q = make(qs, t, Q), k = make(ks, t, K), v = make(ks, t, V), m = make({S1, S2}, ACL_BOOL, M), o = make(qs, t, {0});
        int64_t qlv[] = {4, 5};
        aclIntArray *ql = aclCreateIntArray(qlv, 2);
        char lay[] = "BSH";
        RUN(S, aclnnPromptFlashAttention, q.t, k.t, v.t, nullptr, m.t, ql, N1, 0.3, BIG, 1, lay, N2, o.t);
        Att a{BSH, BSH, B, N1, N2, S1, S2, D, 0.3};
        auto want = att_ref(a, Q, K, V, {}, [&](int64_t b, int64_t, int64_t i, int64_t j) {
            return i >= qlv[b] || M[i * S2 + j] != 0 || j - i > 1;
        });
        compare(t == ACL_FLOAT ? "PromptFlashAttention float32 BSH mask, next 1, query lengths"
                               : "PromptFlashAttention float16 BSH mask, next 1, query lengths",
                read(o), want, tol_of(t) * 3);
        if (t == ACL_FLOAT) {
            char sbh[] = "SBH", tnd[] = "TND";
            expect_code("PromptFlashAttention null query",
                        aclnnPromptFlashAttentionGetWorkspaceSize(nullptr, k.t, v.t, nullptr, m.t, ql, N1, 0.3, BIG, 1, lay,
                                                                  N2, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("PromptFlashAttention null attentionOut",
                        aclnnPromptFlashAttentionGetWorkspaceSize(q.t, k.t, v.t, nullptr, m.t, ql, N1, 0.3, BIG, 1, lay, N2,
                                                                  nullptr, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("PromptFlashAttention layout SBH",
                        aclnnPromptFlashAttentionGetWorkspaceSize(q.t, k.t, v.t, nullptr, m.t, ql, N1, 0.3, BIG, 1, sbh, N2,
                                                                  o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("PromptFlashAttention layout TND",
                        aclnnPromptFlashAttentionGetWorkspaceSize(q.t, k.t, v.t, nullptr, m.t, ql, N1, 0.3, BIG, 1, tnd, N2,
                                                                  o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            Dev mbad = make({S2, S1}, ACL_BOOL, {0});
            expect_code("PromptFlashAttention attenMask [S2, S1]",
                        aclnnPromptFlashAttentionGetWorkspaceSize(q.t, k.t, v.t, nullptr, mbad.t, ql, N1, 0.3, BIG, 1, lay,
                                                                  N2, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            release(mbad);
        }
        aclDestroyIntArray(ql);
        for (Dev *d : {&q, &k, &v, &m, &o}) release(*d);
    }
    /* V2 = V3: BNSD_BSND, a pseShift [1, N1, S1, S2], sparse mode 3 (the compressed mask),
     * key lengths (7, 5): the causal diagonal ends at each batch's last valid key */
    {
        Shape qs = lshape(BNSD, B, S1, N1, D), ks = lshape(BNSD, B, S2, N2, D), os = lshape(BSND, B, S1, N1, D);
        std::vector<double> Q = vals(numel(qs), ACL_FLOAT, 4), K = vals(numel(ks), ACL_FLOAT, 5),
                            V = vals(numel(ks), ACL_FLOAT, 6), P1 = vals(N1 * S1 * S2, ACL_FLOAT, 7), Mc(2048 * 2048);
        for (int64_t i = 0; i < 2048; i++)
            for (int64_t j = 0; j < 2048; j++) Mc[i * 2048 + j] = j > i ? 1 : 0;
        Dev q = make(qs, ACL_FLOAT, Q), k = make(ks, ACL_FLOAT, K), v = make(ks, ACL_FLOAT, V);
        Dev pse = make({1, N1, S1, S2}, ACL_FLOAT, P1), m = make({2048, 2048}, ACL_BOOL, Mc);
        Dev o2 = make(os, ACL_FLOAT, {0}), o3 = make(os, ACL_FLOAT, {0});
        int64_t kvl[] = {7, 5};
        aclIntArray *kv = aclCreateIntArray(kvl, 2);
        char lay[] = "BNSD_BSND";
        RUN(S, aclnnPromptFlashAttentionV2, q.t, k.t, v.t, pse.t, m.t, nullptr, kv, nullptr, nullptr, nullptr, nullptr, nullptr,
            N1, 0.25, BIG, BIG, lay, N2, 3, o2.t);
        RUN(S, aclnnPromptFlashAttentionV3, q.t, k.t, v.t, pse.t, m.t, nullptr, kv, nullptr, nullptr, nullptr, nullptr, nullptr,
            N1, 0.25, BIG, BIG, lay, N2, 3, 1, o3.t);
        std::vector<double> P(static_cast<size_t>(B * N1 * S1 * S2));
        for (size_t i = 0; i < P.size(); i++) P[i] = P1[i % P1.size()];
        Att a{BNSD, BSND, B, N1, N2, S1, S2, D, 0.25};
        auto want = att_ref(a, Q, K, V, P, [&](int64_t b, int64_t, int64_t i, int64_t j) {
            /* sparse 3 aligns the causal diagonal with each batch's actual lengths (the last query
             * row sees the last valid key), as CANN's tiling computes nextTokens per batch */
            return j >= kvl[b] || j > i + (kvl[b] - S1);
        });
        compare("PromptFlashAttentionV2 BNSD_BSND pseShift, sparse 3, key lengths", read(o2), want, 3e-5);
        compare("PromptFlashAttentionV2 equals V3", read(o2), read(o3), 0);
        Dev scale1 = make({1}, ACL_FLOAT, {1});
        expect_code("PromptFlashAttentionV2 with a quantScale1",
                    aclnnPromptFlashAttentionV2GetWorkspaceSize(q.t, k.t, v.t, pse.t, m.t, nullptr, kv, nullptr, scale1.t,
                                                                nullptr, nullptr, nullptr, N1, 0.25, BIG, BIG, lay, N2, 3,
                                                                o2.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("PromptFlashAttentionV2 sparseMode 3 without attenMask",
                    aclnnPromptFlashAttentionV2GetWorkspaceSize(q.t, k.t, v.t, pse.t, nullptr, nullptr, kv, nullptr, nullptr,
                                                                nullptr, nullptr, nullptr, N1, 0.25, BIG, BIG, lay, N2, 3,
                                                                o2.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("PromptFlashAttentionV2 null value",
                    aclnnPromptFlashAttentionV2GetWorkspaceSize(q.t, k.t, nullptr, pse.t, m.t, nullptr, kv, nullptr, nullptr,
                                                                nullptr, nullptr, nullptr, N1, 0.25, BIG, BIG, lay, N2, 3,
                                                                o2.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        aclDestroyIntArray(kv);
        for (Dev *d : {&q, &k, &v, &pse, &m, &o2, &o3, &scale1}) release(*d);
    }
    printf("ok prompt\n");
}

/* ---------------------------------------------------------------- IncreFlashAttention */

static void incre() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* BNSD query [B, N1, 1, D] as the reference's examples, a [B, 1, 1, S2] int8 mask,
     * actualSeqLengths (6, 4); V2 adds a pseShift [B, N1, 1, S2] */
    const int64_t B = 2, N1 = 4, N2 = 2, S2 = 7, D = 8;
    for (aclDataType t : {ACL_FLOAT, ACL_FLOAT16}) {
        Shape qs = lshape(BNSD, B, 1, N1, D), ks = lshape(BNSD, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), t, 11), K = vals(numel(ks), t, 12), V = vals(numel(ks), t, 13),
                            P = vals(B * N1 * S2, t, 14), M(static_cast<size_t>(B * S2), 0.0);
        M[1] = 1;
        M[S2 + 2] = 1;
        Dev q = make(qs, t, Q), k = make(ks, t, K), v = make(ks, t, V), m = make({B, 1, 1, S2}, ACL_INT8, M);
        Dev pse = make({B, N1, 1, S2}, t, P);
        Dev o1 = make(qs, t, {0}), o2 = make(qs, t, {0}), o3 = make(qs, t, {0}), o4 = make(qs, t, {0});
        aclTensorList *kl = aclCreateTensorList(&k.t, 1), *vl = aclCreateTensorList(&v.t, 1);
        int64_t al[] = {6, 4};
        aclIntArray *acl = aclCreateIntArray(al, 2);
        char lay[] = "BNSD";
        RUN(S, aclnnIncreFlashAttention, q.t, kl, vl, nullptr, m.t, acl, N1, 0.3, lay, N2, o1.t);
        RUN(S, aclnnIncreFlashAttentionV2, q.t, kl, vl, pse.t, m.t, acl, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3,
            lay, N2, o2.t);
        RUN(S, aclnnIncreFlashAttentionV3, q.t, kl, vl, pse.t, m.t, acl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, N1, 0.3, lay, N2, 0, 0, o3.t);
        RUN(S, aclnnIncreFlashAttentionV4, q.t, kl, vl, pse.t, m.t, acl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, N1, 0.3, lay, N2, 0, 0, o4.t);
        Att a{BNSD, BNSD, B, N1, N2, 1, S2, D, 0.3};
        Mask mk = [&](int64_t b, int64_t, int64_t, int64_t j) { return M[b * S2 + j] != 0 || j >= al[b]; };
        const bool f32 = t == ACL_FLOAT;
        compare(f32 ? "IncreFlashAttention float32 BNSD mask, lengths" : "IncreFlashAttention float16 BNSD mask, lengths",
                read(o1), att_ref(a, Q, K, V, {}, mk), tol_of(t) * 3);
        compare(f32 ? "IncreFlashAttentionV2 float32 pseShift" : "IncreFlashAttentionV2 float16 pseShift", read(o2),
                att_ref(a, Q, K, V, P, mk), tol_of(t) * 3);
        compare(f32 ? "IncreFlashAttentionV3 float32 equals V2" : "IncreFlashAttentionV3 float16 equals V2", read(o3), read(o2), 0);
        compare(f32 ? "IncreFlashAttentionV4 float32 equals V3" : "IncreFlashAttentionV4 float16 equals V3", read(o4), read(o3), 0);
        if (f32) {
            expect_code("IncreFlashAttention null key list",
                        aclnnIncreFlashAttentionGetWorkspaceSize(q.t, nullptr, vl, nullptr, m.t, acl, N1, 0.3, lay, N2, o1.t,
                                                                 &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            char sbh[] = "SBH";
            expect_code("IncreFlashAttention layout SBH",
                        aclnnIncreFlashAttentionGetWorkspaceSize(q.t, kl, vl, nullptr, m.t, acl, N1, 0.3, sbh, N2, o1.t, &ws,
                                                                 &ex),
                        ACLNN_ERR_PARAM_INVALID);
            Dev q2 = make(lshape(BNSD, B, 2, N1, D), t, {1}), o2b = make(lshape(BNSD, B, 2, N1, D), t, {0});
            expect_code("IncreFlashAttentionV2 query sequence length 2",
                        aclnnIncreFlashAttentionV2GetWorkspaceSize(q2.t, kl, vl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                                                   nullptr, nullptr, nullptr, N1, 0.3, lay, N2, o2b.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("IncreFlashAttentionV2 with a dequantScale1",
                        aclnnIncreFlashAttentionV2GetWorkspaceSize(q.t, kl, vl, nullptr, m.t, acl, pse.t, nullptr, nullptr,
                                                                   nullptr, nullptr, N1, 0.3, lay, N2, o2.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("IncreFlashAttentionV3 with an INT8 blocktable",
                        aclnnIncreFlashAttentionV3GetWorkspaceSize(q.t, kl, vl, nullptr, m.t, acl, nullptr, nullptr, nullptr,
                                                                   nullptr, nullptr, nullptr, nullptr, m.t, N1, 0.3, lay, N2,
                                                                   128, 0, o3.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("IncreFlashAttentionV3 null attentionOut",
                        aclnnIncreFlashAttentionV3GetWorkspaceSize(q.t, kl, vl, nullptr, m.t, acl, nullptr, nullptr, nullptr,
                                                                   nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.3, lay,
                                                                   N2, 0, 0, nullptr, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            release(q2);
            release(o2b);
        }
        aclDestroyIntArray(acl);
        for (Dev *d : {&q, &m, &pse, &o1, &o2, &o3, &o4}) release(*d);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        if (k.mem) aclrtFree(k.mem);
        if (v.mem) aclrtFree(v.mem);
    }
    printf("ok incre\n");
}

/* ---------------------------------------------------------------- FusedInferAttentionScore */

/* The reference log-sum-exp [B, N1, S1, 1]; rows without a valid key give 0 on both sides. */
static void compare_lse(const char *what, std::vector<double> got, const std::vector<double> &mx,
                        const std::vector<double> &sm) {
    std::vector<double> want(mx.size());
    for (size_t r = 0; r < mx.size(); r++) {
        if (sm[r] == 0) {
            got[r] = 0;
            want[r] = 0;
        } else {
            want[r] = mx[r] + std::log(sm[r]);
        }
    }
    compare(what, got, want, 1e-5);
}

static void fused_infer() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const int64_t B = 2, N1 = 4, N2 = 2, D = 8;
    /* prompt (BSH, S 5/6, query lengths (4, 5), key lengths (6, 3), a [B, 1, S1, S2] mask)
     * and incremental (BNSD, S 1/6, key lengths (6, 2)); V1 and V4 against the reference and
     * against V3 */
    for (int64_t S1 : {5, 1}) {
        const int64_t S2 = 6;
        Lay l = S1 > 1 ? BSH : BNSD;
        Shape qs = lshape(l, B, S1, N1, D), ks = lshape(l, B, S2, N2, D);
        std::vector<double> Q = vals(numel(qs), ACL_FLOAT, 21), K = vals(numel(ks), ACL_FLOAT, 22),
                            V = vals(numel(ks), ACL_FLOAT, 23), M(static_cast<size_t>(B * S1 * S2), 0.0);
        for (size_t i = 0; i < M.size(); i += 5) M[i] = 1;
        for (int64_t b = 0; b < B; b++)
            for (int64_t i = 0; i < S1; i++) M[(b * S1 + i) * S2] = 0;
        Dev q = make(qs, ACL_FLOAT, Q), k = make(ks, ACL_FLOAT, K), v = make(ks, ACL_FLOAT, V);
        Dev m = make({B, 1, S1, S2}, ACL_BOOL, M);
        Dev o1 = make(qs, ACL_FLOAT, {0}), o3 = make(qs, ACL_FLOAT, {0}), o4 = make(qs, ACL_FLOAT, {0});
        Dev l1 = make({B, N1, S1, 1}, ACL_FLOAT, {0}), l3 = make({B, N1, S1, 1}, ACL_FLOAT, {0}),
            l4 = make({B, N1, S1, 1}, ACL_FLOAT, {0});
        aclTensorList *kl = aclCreateTensorList(&k.t, 1), *vl = aclCreateTensorList(&v.t, 1);
        int64_t qlv[] = {4, 5}, kvv[] = {6, S1 > 1 ? 3 : 2};
        aclIntArray *ql = S1 > 1 ? aclCreateIntArray(qlv, 2) : nullptr, *kvl = aclCreateIntArray(kvv, 2);
        char lay[8];
        snprintf(lay, sizeof lay, "%s", S1 > 1 ? "BSH" : "BNSD");
        RUN(S, aclnnFusedInferAttentionScore, q.t, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, o1.t, l1.t);
        RUN(S, aclnnFusedInferAttentionScoreV3, q.t, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, 0, 0, o3.t, l3.t);
        RUN(S, aclnnFusedInferAttentionScoreV4, q.t, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, 0, 0, 0,
            o4.t, l4.t);
        Att a{l, l, B, N1, N2, S1, S2, D, 0.35};
        std::vector<double> mx, sm;
        auto want = att_ref(a, Q, K, V, {}, [&](int64_t b, int64_t, int64_t i, int64_t j) {
            return (S1 > 1 && i >= qlv[b]) || j >= kvv[b] || M[(b * S1 + i) * S2 + j] != 0;
        }, &mx, &sm);
        const bool p = S1 > 1;
        compare(p ? "FusedInferAttentionScore prompt BSH mask, query and key lengths"
                  : "FusedInferAttentionScore incremental BNSD mask, key lengths",
                read(o1), want, 3e-5);
        compare_lse(p ? "FusedInferAttentionScore prompt softmaxLse" : "FusedInferAttentionScore incremental softmaxLse",
                    read(l1), mx, sm);
        compare(p ? "FusedInferAttentionScore prompt equals V3" : "FusedInferAttentionScore incremental equals V3", read(o1),
                read(o3), 0);
        compare(p ? "FusedInferAttentionScoreV4 prompt equals V3" : "FusedInferAttentionScoreV4 incremental equals V3",
                read(o4), read(o3), 0);
        compare(p ? "FusedInferAttentionScoreV4 prompt softmaxLse equals V3"
                  : "FusedInferAttentionScoreV4 incremental softmaxLse equals V3",
                read(l4), read(l3), 0);
        if (p) {
            expect_code("FusedInferAttentionScore null attentionOut",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, nullptr, l1.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("FusedInferAttentionScore softmaxLseFlag with a null softmaxLse",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, o1.t, nullptr, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("FusedInferAttentionScore with a deqScale1",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, m.t, ql, kvl, l1.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, o1.t, l1.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            char bhs[] = "BHS";
            expect_code("FusedInferAttentionScore layout BHS",
                        aclnnFusedInferAttentionScoreGetWorkspaceSize(
                            q.t, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, bhs, N2, 0, 0, 0, 0, true, o1.t, l1.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FusedInferAttentionScoreV4 with a learnableSinkOptional of the wrong shape",
                        aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
                            q.t, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, l1.t, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, 0, 0, 0, o4.t,
                            l4.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FusedInferAttentionScoreV4 null query",
                        aclnnFusedInferAttentionScoreV4GetWorkspaceSize(
                            nullptr, kl, vl, nullptr, m.t, ql, kvl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                            nullptr, nullptr, nullptr, nullptr, nullptr, N1, 0.35, BIG, BIG, lay, N2, 0, 0, 0, 0, true, 0, 0,
                            0, o4.t, l4.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
        }
        if (ql) aclDestroyIntArray(ql);
        aclDestroyIntArray(kvl);
        for (Dev *d : {&q, &m, &o1, &o3, &o4, &l1, &l3, &l4}) release(*d);
        aclDestroyTensorList(kl);
        aclDestroyTensorList(vl);
        if (k.mem) aclrtFree(k.mem);
        if (v.mem) aclrtFree(v.mem);
    }
    printf("ok fused infer\n");
}

/* ---------------------------------------------------------------- FlashAttentionScoreV2 (+Grad) */

static void flash_v2() {
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* BSND, grouped key heads, a pse [B, N1, S1, S2], a [S1, S2] mask */
    const int64_t B = 2, N1 = 2, N2 = 1, S1 = 4, S2 = 5, D = 4;
    Shape qs = lshape(BSND, B, S1, N1, D), ks = lshape(BSND, B, S2, N2, D), st = {B, N1, S1, 8};
    std::vector<double> Q = vals(numel(qs), ACL_FLOAT, 31), K = vals(numel(ks), ACL_FLOAT, 32),
                        V = vals(numel(ks), ACL_FLOAT, 33), P = vals(B * N1 * S1 * S2, ACL_FLOAT, 34),
                        DY = vals(numel(qs), ACL_FLOAT, 35), M(static_cast<size_t>(S1 * S2), 0.0);
    M[3] = 1;
    M[S2 + 4] = 1;
    Dev q = make(qs, ACL_FLOAT, Q), k = make(ks, ACL_FLOAT, K), v = make(ks, ACL_FLOAT, V), dy = make(qs, ACL_FLOAT, DY);
    Dev pse = make({B, N1, S1, S2}, ACL_FLOAT, P), m = make({S1, S2}, ACL_UINT8, M), sout = make({0}, ACL_FLOAT, {});
    char lay[] = "BSND";
    const double scale = 0.5;
    int64_t zero = 0;
    aclIntArray *prefix = aclCreateIntArray(&zero, 1), *qsi = aclCreateIntArray(&zero, 1), *kvsi = aclCreateIntArray(&zero, 1);
    Mask mk = [&](int64_t, int64_t, int64_t i, int64_t j) { return M[i * S2 + j] != 0; };
    for (int pt : {1, 0}) {
        Dev o = make(qs, ACL_FLOAT, {0}), smax = make(st, ACL_FLOAT, {0}), ssum = make(st, ACL_FLOAT, {0});
        RUN(S, aclnnFlashAttentionScoreV2, q.t, k.t, v.t, pse.t, nullptr, nullptr, m.t, prefix, qsi, kvsi, scale, 1.0, BIG,
            BIG, N1, lay, 0, 0, pt, smax.t, ssum.t, sout.t, o.t);
        Att a{BSND, BSND, B, N1, N2, S1, S2, D, scale, pt == 0};
        std::vector<double> mx, sm;
        auto want = att_ref(a, Q, K, V, P, mk, &mx, &sm);
        std::vector<double> wmax, wsum;
        for (size_t r = 0; r < mx.size(); r++)
            for (int e = 0; e < 8; e++) {
                wmax.push_back(mx[r]);
                wsum.push_back(sm[r]);
            }
        compare(pt ? "FlashAttentionScoreV2 pseType 1 BSND pse mask" : "FlashAttentionScoreV2 pseType 0 BSND pse mask",
                read(o), want, 3e-5);
        compare(pt ? "FlashAttentionScoreV2 pseType 1 softmaxMax" : "FlashAttentionScoreV2 pseType 0 softmaxMax", read(smax),
                wmax, 1e-5);
        compare(pt ? "FlashAttentionScoreV2 pseType 1 softmaxSum" : "FlashAttentionScoreV2 pseType 0 softmaxSum", read(ssum),
                wsum, 1e-5);
        Dev dq = make(qs, ACL_FLOAT, {0}), dk = make(ks, ACL_FLOAT, {0}), dv = make(ks, ACL_FLOAT, {0}),
            dpse = make({B, N1, S1, S2}, ACL_FLOAT, {0});
        RUN(S, aclnnFlashAttentionScoreGradV2, q.t, k.t, v.t, dy.t, pse.t, nullptr, nullptr, m.t, smax.t, ssum.t, nullptr,
            o.t, prefix, qsi, kvsi, scale, 1.0, BIG, BIG, N1, lay, 0, 0, pt, dq.t, dk.t, dv.t, dpse.t);
        if (pt == 1) {
            /* the first versions are pseType 1 */
            Dev o1 = make(qs, ACL_FLOAT, {0}), dq1 = make(qs, ACL_FLOAT, {0}), dk1 = make(ks, ACL_FLOAT, {0}),
                dv1 = make(ks, ACL_FLOAT, {0}), dp1 = make({B, N1, S1, S2}, ACL_FLOAT, {0});
            RUN(S, aclnnFlashAttentionScore, q.t, k.t, v.t, pse.t, nullptr, nullptr, m.t, prefix, scale, 1.0, BIG, BIG, N1,
                lay, 0, 0, smax.t, ssum.t, sout.t, o1.t);
            compare("FlashAttentionScoreV2 pseType 1 equals FlashAttentionScore", read(o), read(o1), 0);
            RUN(S, aclnnFlashAttentionScoreGrad, q.t, k.t, v.t, dy.t, pse.t, nullptr, nullptr, m.t, smax.t, ssum.t, nullptr,
                o.t, prefix, scale, 1.0, BIG, BIG, N1, lay, 0, 0, dq1.t, dk1.t, dv1.t, dp1.t);
            compare("FlashAttentionScoreGradV2 pseType 1 dq equals FlashAttentionScoreGrad", read(dq), read(dq1), 0);
            compare("FlashAttentionScoreGradV2 pseType 1 dk equals FlashAttentionScoreGrad", read(dk), read(dk1), 0);
            compare("FlashAttentionScoreGradV2 pseType 1 dv equals FlashAttentionScoreGrad", read(dv), read(dv1), 0);
            compare("FlashAttentionScoreGradV2 pseType 1 dpse equals FlashAttentionScoreGrad", read(dpse), read(dp1), 0);
            for (Dev *d : {&o1, &dq1, &dk1, &dv1, &dp1}) release(*d);
        } else {
            /* pseType 0: central differences of L = Σ dy·out on the reference */
            auto fd = [&](int which) {
                std::vector<double> qq = Q, kk = K, vv = V, pp = P;
                std::vector<double> &w = which == 0 ? qq : which == 1 ? kk : which == 2 ? vv : pp;
                std::vector<double> g(w.size());
                const double h = 1e-5;
                for (size_t i = 0; i < w.size(); i++) {
                    double s0 = w[i], l[2];
                    for (int sgn = 0; sgn < 2; sgn++) {
                        w[i] = s0 + (sgn ? -h : h);
                        auto out = att_ref(a, qq, kk, vv, pp, mk);
                        l[sgn] = 0;
                        for (size_t e = 0; e < out.size(); e++) l[sgn] += out[e] * DY[e];
                    }
                    w[i] = s0;
                    g[i] = (l[0] - l[1]) / (2 * h);
                }
                return g;
            };
            compare("FlashAttentionScoreGradV2 pseType 0 dq", read(dq), fd(0), 2e-5);
            compare("FlashAttentionScoreGradV2 pseType 0 dk", read(dk), fd(1), 2e-5);
            compare("FlashAttentionScoreGradV2 pseType 0 dv", read(dv), fd(2), 2e-5);
            compare("FlashAttentionScoreGradV2 pseType 0 dpse", read(dpse), fd(3), 2e-5);
            expect_code("FlashAttentionScoreV2 pseType 4",
                        aclnnFlashAttentionScoreV2GetWorkspaceSize(q.t, k.t, v.t, pse.t, nullptr, nullptr, m.t, prefix, qsi,
                                                                   kvsi, scale, 1.0, BIG, BIG, N1, lay, 0, 0, 4, smax.t,
                                                                   ssum.t, sout.t, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FlashAttentionScoreV2 pseType 2 with a pse (ALiBi slopes)",
                        aclnnFlashAttentionScoreV2GetWorkspaceSize(q.t, k.t, v.t, pse.t, nullptr, nullptr, m.t, prefix, qsi,
                                                                   kvsi, scale, 1.0, BIG, BIG, N1, lay, 0, 0, 2, smax.t,
                                                                   ssum.t, sout.t, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FlashAttentionScoreV2 null softmaxMaxOut",
                        aclnnFlashAttentionScoreV2GetWorkspaceSize(q.t, k.t, v.t, pse.t, nullptr, nullptr, m.t, prefix, qsi,
                                                                   kvsi, scale, 1.0, BIG, BIG, N1, lay, 0, 0, 0, nullptr,
                                                                   ssum.t, sout.t, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            char tnd[] = "TND";
            expect_code("FlashAttentionScoreV2 layout TND",
                        aclnnFlashAttentionScoreV2GetWorkspaceSize(q.t, k.t, v.t, pse.t, nullptr, nullptr, m.t, prefix, qsi,
                                                                   kvsi, scale, 1.0, BIG, BIG, N1, tnd, 0, 0, 0, smax.t,
                                                                   ssum.t, sout.t, o.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("FlashAttentionScoreGradV2 null dqOut",
                        aclnnFlashAttentionScoreGradV2GetWorkspaceSize(q.t, k.t, v.t, dy.t, pse.t, nullptr, nullptr, m.t,
                                                                       smax.t, ssum.t, nullptr, o.t, prefix, qsi, kvsi, scale,
                                                                       1.0, BIG, BIG, N1, lay, 0, 0, 0, nullptr, dk.t, dv.t,
                                                                       dpse.t, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("FlashAttentionScoreGradV2 dy of the key's shape",
                        aclnnFlashAttentionScoreGradV2GetWorkspaceSize(q.t, k.t, v.t, k.t, pse.t, nullptr, nullptr, m.t,
                                                                       smax.t, ssum.t, nullptr, o.t, prefix, qsi, kvsi, scale,
                                                                       1.0, BIG, BIG, N1, lay, 0, 0, 0, dq.t, dk.t, dv.t,
                                                                       dpse.t, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
        }
        for (Dev *d : {&o, &smax, &ssum, &dq, &dk, &dv, &dpse}) release(*d);
    }
    aclDestroyIntArray(prefix);
    aclDestroyIntArray(qsi);
    aclDestroyIntArray(kvsi);
    for (Dev *d : {&q, &k, &v, &dy, &pse, &m, &sout}) release(*d);
    printf("ok flash v2\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    prompt();
    incre();
    fused_infer();
    flash_v2();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
