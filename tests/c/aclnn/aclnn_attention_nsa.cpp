/* Native sparse attention, selected branch: aclnnNsaSelectedAttention and
 * aclnnNsaSelectedAttentionGrad (layout TND), against a float64 host reference written here
 * from CANN's formula: query row i of sequence b, head n (key/value head n / G) attends to
 * the selectedBlockCount blocks of selectedBlockSize key rows that topkIndices[i, n / G, :]
 * names; out = softmax(scale · q·K_sel^T) V_sel. sparseMode 2 with a mask hides key rows
 * p > i of the sequence (causal), sparseMode 0 with a mask hides the p that mask[i, p] marks,
 * no mask hides nothing. softmaxMax/softmaxSum are [T_q, N_q, 8] (8 equal copies). The
 * backward against the analytic gradient of that reference (dq, dk, dv). The documented
 * argument errors: null required arguments 161001, unsupported dtypes/layouts/shapes 161002.
 * aclnnNsaSelectedAttentionInfer (paged key/value caches read through blockTable; BSND with
 * several query tokens, BSH, TND; -1 padding in topkIndices; the last selected block cut at
 * the batch's key/value length) against the same kind of reference, and its documented
 * argument errors. */
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_nsa_selected_attention.h"
#include "aclnnop/aclnn_nsa_selected_attention_grad.h"
#include "aclnnop/aclnn_nsa_selected_attention_infer.h"

static aclrtStream S;
static const int64_t NQ = 4, NKV = 2, DK = 192, DV = 128, BS = 16, CNT = 2;
static const double SCALE = 0.0721;
static const std::vector<int64_t> SQ = {5, 3}, SKV = {48, 32};

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else {
        printf("error %s: %s\n", what, test_msg());
    }
}

static aclIntArray *ints(const std::vector<int64_t> &v) { return aclCreateIntArray(v.data(), v.size()); }

static std::vector<double> small(int64_t n, aclDataType dt, unsigned seed) {
    std::vector<double> v = values(n, dt, seed);
    for (auto &e : v) e = as_type(e / 10.0, dt);
    return v;
}

/* mode: 0 no mask, 2 causal, 1 explicit mask M ([8, 48]) */
struct Ref {
    std::vector<double> O, MX, SM, DQ, DK, DV;
};

static Ref reference(int mode, const std::vector<double> &Q, const std::vector<double> &K, const std::vector<double> &V,
                     const std::vector<double> &TK, const std::vector<double> &M, const std::vector<double> *G) {
    int64_t tq = 0, tkv = 0;
    for (size_t b = 0; b < SQ.size(); b++) tq += SQ[b], tkv += SKV[b];
    Ref r;
    r.O.assign(static_cast<size_t>(tq * NQ * DV), 0.0);
    r.MX.assign(static_cast<size_t>(tq * NQ * 8), 0.0);
    r.SM = r.MX;
    r.DQ.assign(Q.size(), 0.0);
    r.DK.assign(K.size(), 0.0);
    r.DV.assign(V.size(), 0.0);
    int64_t q0 = 0, k0 = 0;
    for (size_t b = 0; b < SQ.size(); b++) {
        for (int64_t i = 0; i < SQ[b]; i++)
            for (int64_t n = 0; n < NQ; n++) {
                int64_t row = (q0 + i) * NQ + n, h = n / (NQ / NKV);
                std::vector<int64_t> keys;
                for (int64_t c = 0; c < CNT; c++) {
                    int64_t blk = static_cast<int64_t>(TK[((q0 + i) * NKV + h) * CNT + c]);
                    for (int64_t j = 0; j < BS; j++) {
                        int64_t p = blk * BS + j;
                        bool hid = mode == 2 ? p > i : mode == 1 ? M[i * 48 + p] != 0 : false;
                        if (!hid) keys.push_back(k0 + p);
                    }
                }
                std::vector<double> s;
                double m = -INFINITY, sum = 0;
                for (int64_t kr : keys) {
                    double d = 0;
                    for (int64_t e = 0; e < DK; e++) d += Q[row * DK + e] * K[(kr * NKV + h) * DK + e];
                    s.push_back(SCALE * d);
                    m = std::max(m, SCALE * d);
                }
                for (double x : s) sum += std::exp(x - m);
                for (int e = 0; e < 8; e++) r.MX[row * 8 + e] = m, r.SM[row * 8 + e] = sum;
                for (size_t j = 0; j < keys.size(); j++)
                    for (int64_t e = 0; e < DV; e++)
                        r.O[row * DV + e] += std::exp(s[j] - m) / sum * V[(keys[j] * NKV + h) * DV + e];
                if (!G) continue;
                double dd = 0;
                for (int64_t e = 0; e < DV; e++) dd += (*G)[row * DV + e] * r.O[row * DV + e];
                for (size_t j = 0; j < keys.size(); j++) {
                    double p = std::exp(s[j] - m) / sum, dp = 0;
                    int64_t ko = (keys[j] * NKV + h) * DK, vo = (keys[j] * NKV + h) * DV;
                    for (int64_t e = 0; e < DV; e++) dp += (*G)[row * DV + e] * V[vo + e];
                    double ds = SCALE * p * (dp - dd);
                    for (int64_t e = 0; e < DK; e++) {
                        r.DQ[row * DK + e] += ds * K[ko + e];
                        r.DK[ko + e] += ds * Q[row * DK + e];
                    }
                    for (int64_t e = 0; e < DV; e++) r.DV[vo + e] += p * (*G)[row * DV + e];
                }
            }
        q0 += SQ[b];
        k0 += SKV[b];
    }
    return r;
}

static std::vector<double> rounded(std::vector<double> v, aclDataType dt) {
    for (auto &e : v) e = as_type(e, dt);
    return v;
}

static void selected() {
    int64_t tq = 8, tkv = 80;
    aclIntArray *ql = ints({5, 8}), *kl = ints({48, 80});
    char tnd[] = "TND", bsnd[] = "BSND";
    /* block choices per (row, kv head): block 0 always (no row fully hidden by the causal
     * mask), and another one, in varying order */
    std::vector<double> TK;
    for (int64_t t = 0; t < tq; t++)
        for (int64_t h = 0; h < NKV; h++) {
            int64_t nblk = t < 5 ? 3 : 2, other = 1 + (t + h) % (nblk - 1);
            if ((t + h) % 2) TK.push_back(0), TK.push_back(other);
            else TK.push_back(other), TK.push_back(0);
        }
    std::vector<double> M(8 * 48);
    for (size_t e = 0; e < M.size(); e++) M[e] = (e * 7 % 5) == 0;
    for (size_t e = 0; e < 8; e++) M[e * 48] = 0; /* key row 0 stays visible */
    Dev tk = make({tq, NKV, CNT}, ACL_INT32, TK), mask = make({8, 48}, ACL_BOOL, M);
    for (aclDataType dt : {ACL_FLOAT16, ACL_BF16})
        for (int mode : {0, 2, 1}) {
            const char *nm = dt == ACL_FLOAT16 ? "float16" : "bfloat16";
            const char *mn = mode == 0 ? "no mask" : mode == 2 ? "sparseMode 2 (causal)" : "sparseMode 0 (explicit mask)";
            double tol = dt == ACL_FLOAT16 ? 2e-3 : 1e-2;
            std::vector<double> Q = small(tq * NQ * DK, dt, 1), K = small(tkv * NKV * DK, dt, 2),
                                V = small(tkv * NKV * DV, dt, 3), G = small(tq * NQ * DV, dt, 4);
            Ref r = reference(mode, Q, K, V, TK, M, nullptr);
            Dev q = make({tq, NQ, DK}, dt, Q), k = make({tkv, NKV, DK}, dt, K), v = make({tkv, NKV, DV}, dt, V);
            Dev mx = make({tq, NQ, 8}, ACL_FLOAT, {0}), sm = make({tq, NQ, 8}, ACL_FLOAT, {0}), o = make({tq, NQ, DV}, dt, {0});
            aclTensor *mt = mode == 0 ? nullptr : mask.t;
            int64_t sparse = mode == 1 ? 0 : 2;
            RUN(S, aclnnNsaSelectedAttention, q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, sparse, BS, CNT, mx.t, sm.t,
                o.t);
            char what[160];
            snprintf(what, sizeof what, "NsaSelectedAttention %s %s attentionOut", nm, mn);
            compare(what, read(o), rounded(r.O, dt), tol);
            snprintf(what, sizeof what, "NsaSelectedAttention %s %s softmaxMax", nm, mn);
            compare(what, read(mx), rounded(r.MX, ACL_FLOAT), 1e-6);
            snprintf(what, sizeof what, "NsaSelectedAttention %s %s softmaxSum", nm, mn);
            compare(what, read(sm), rounded(r.SM, ACL_FLOAT), 1e-6);
            /* the backward from the device's out and statistics */
            Ref rg = reference(mode, Q, K, V, TK, M, &G);
            Dev g = make({tq, NQ, DV}, dt, G), dq = make({tq, NQ, DK}, dt, {7}), dk = make({tkv, NKV, DK}, dt, {7}),
                dv = make({tkv, NKV, DV}, dt, {7});
            RUN(S, aclnnNsaSelectedAttentionGrad, q.t, k.t, v.t, o.t, g.t, mx.t, sm.t, tk.t, ql, kl, mt, SCALE, BS, CNT,
                NQ, tnd, sparse, dq.t, dk.t, dv.t);
            /* the device's dd uses the float-rounded out: allow for that in the tolerance */
            double gt = dt == ACL_FLOAT16 ? 4e-3 : 2e-2;
            snprintf(what, sizeof what, "NsaSelectedAttentionGrad %s %s dq", nm, mn);
            compare(what, read(dq), rounded(rg.DQ, dt), gt);
            snprintf(what, sizeof what, "NsaSelectedAttentionGrad %s %s dk", nm, mn);
            compare(what, read(dk), rounded(rg.DK, dt), gt);
            snprintf(what, sizeof what, "NsaSelectedAttentionGrad %s %s dv (zero for unselected rows)", nm, mn);
            compare(what, read(dv), rounded(rg.DV, dt), gt);
            if (dt == ACL_FLOAT16 && mode == 2) {
                uint64_t ws = 0;
                aclOpExecutor *ex = nullptr;
                Dev tk64 = make({tq, NKV, CNT}, ACL_INT64, TK), v64 = make({tkv, NKV, 64}, dt, {0}),
                    qf = make({tq, NQ, DK}, ACL_FLOAT, {0}), mx4 = make({tq, NQ, 4}, ACL_FLOAT, {0});
                aclIntArray *bad = ints({5, 7}), *one = ints({8}), *kv40 = ints({40, 80});
                expect_code("NsaSelectedAttention null query",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(nullptr, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd,
                                                                      2, BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_NULLPTR);
                expect_code("NsaSelectedAttention null attentionOut",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, nullptr, &ws, &ex),
                            ACLNN_ERR_PARAM_NULLPTR);
                expect_code("NsaSelectedAttention null actualSeqQLenOptional with TND",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, nullptr, kl, SCALE, NQ,
                                                                      tnd, 2, BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_NULLPTR);
                expect_code("NsaSelectedAttention float32 query",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(qf.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention layout BSND",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, bsnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention int64 topkIndices",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk64.t, mt, ql, kl, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention sparseMode 3",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, 3,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention selectedBlockSize 8",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, 2,
                                                                      8, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention value head dim 64",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v64.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention headNum 2 for 4 query heads",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, 2, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention actualSeqQLen not ending at T",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, bad, kl, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention one query sequence, two key/value sequences",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, one, kl, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention selectedBlockCount 4 with topkIndices of 2",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, 2,
                                                                      BS, 4, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention a key/value sequence of 40 rows (not a multiple of 16)",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kv40, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttention softmaxMaxOut [T, N, 4]",
                            aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tk.t, mt, ql, kl, SCALE, NQ, tnd, 2,
                                                                      BS, CNT, mx4.t, sm.t, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttentionGrad null attentionOutGrad",
                            aclnnNsaSelectedAttentionGradGetWorkspaceSize(q.t, k.t, v.t, o.t, nullptr, mx.t, sm.t, tk.t, ql,
                                                                          kl, mt, SCALE, BS, CNT, NQ, tnd, 2, dq.t, dk.t,
                                                                          dv.t, &ws, &ex),
                            ACLNN_ERR_PARAM_NULLPTR);
                expect_code("NsaSelectedAttentionGrad dqOut of key's shape",
                            aclnnNsaSelectedAttentionGradGetWorkspaceSize(q.t, k.t, v.t, o.t, g.t, mx.t, sm.t, tk.t, ql, kl,
                                                                          mt, SCALE, BS, CNT, NQ, tnd, 2, dk.t, dk.t, dv.t,
                                                                          &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                /* a block index past the sequence fails at launch */
                std::vector<double> TKbad = TK;
                TKbad[0] = 5;
                Dev tkb = make({tq, NKV, CNT}, ACL_INT32, TKbad);
                NN(aclnnNsaSelectedAttentionGetWorkspaceSize(q.t, k.t, v.t, tkb.t, mt, ql, kl, SCALE, NQ, tnd, 2, BS, CNT,
                                                             mx.t, sm.t, o.t, &ws, &ex));
                g_checks++;
                aclnnStatus st = aclnnNsaSelectedAttention(nullptr, ws, ex, S);
                if (st == ACL_SUCCESS) st = static_cast<aclnnStatus>(aclrtSynchronizeStream(S));
                if (st == ACL_SUCCESS) {
                    printf("FAIL NsaSelectedAttention with block index 5 of a 3-block sequence succeeded\n");
                    g_fail++;
                } else {
                    printf("error NsaSelectedAttention block index 5 of 3: %d\n", static_cast<int>(st));
                }
                aclDestroyIntArray(bad);
                aclDestroyIntArray(one);
                aclDestroyIntArray(kv40);
                for (Dev *d : {&tk64, &v64, &qf, &mx4, &tkb}) release(*d);
            }
            for (Dev *d : {&q, &k, &v, &mx, &sm, &o, &g, &dq, &dk, &dv}) release(*d);
        }
    release(tk);
    release(mask);
    aclDestroyIntArray(ql);
    aclDestroyIntArray(kl);
    printf("ok nsa selected attention\n");
}

/* ---------------------------------------------------------------- inference (paged) */

/* Query row r (batch rb[r]) and head n read the selected blocks of topk[r, n / G, :] (−1
 * skipped), key position p of batch b from cache row table[b][p / PAGE] * PAGE + p % PAGE,
 * positions cut at kvlen[b]. Caches [blocks, PAGE, NKV, D]. */
static std::vector<double> infer_reference(const std::vector<int> &rb, const std::vector<double> &Q,
                                           const std::vector<double> &K, const std::vector<double> &V,
                                           const std::vector<double> &TK, const std::vector<double> &TB, int64_t cols,
                                           const std::vector<int64_t> &kvlen, int64_t page, int64_t blk, int64_t cnt,
                                           double scale) {
    std::vector<double> O(rb.size() * NQ * DV, 0.0);
    for (size_t r = 0; r < rb.size(); r++)
        for (int64_t n = 0; n < NQ; n++) {
            int64_t h = n / (NQ / NKV), b = rb[r];
            std::vector<int64_t> rows;
            for (int64_t c = 0; c < cnt; c++) {
                int64_t idx = static_cast<int64_t>(TK[(r * NKV + h) * cnt + c]);
                if (idx < 0) continue;
                for (int64_t p = idx * blk; p < std::min((idx + 1) * blk, kvlen[b]); p++)
                    rows.push_back(static_cast<int64_t>(TB[b * cols + p / page]) * page + p % page);
            }
            std::vector<double> sc;
            double m = -INFINITY, sum = 0;
            for (int64_t kr : rows) {
                double d = 0;
                for (int64_t e = 0; e < DK; e++) d += Q[(r * NQ + n) * DK + e] * K[(kr * NKV + h) * DK + e];
                sc.push_back(scale * d);
                m = std::max(m, scale * d);
            }
            for (double x : sc) sum += std::exp(x - m);
            for (size_t j = 0; j < rows.size(); j++)
                for (int64_t e = 0; e < DV; e++)
                    O[(r * NQ + n) * DV + e] += std::exp(sc[j] - m) / sum * V[(rows[j] * NKV + h) * DV + e];
        }
    return O;
}

static void selected_infer() {
    const int64_t PAGE = 64, BLK = 32, C = 3, NB = 5, COLS = 2;
    const std::vector<int64_t> kvlen = {100, 70};
    /* batch 0 in cache blocks 3, 0; batch 1 in 4, 1 (block 2 unused) */
    std::vector<double> TB = {3, 0, 4, 1};
    std::vector<int64_t> kvv(kvlen);
    aclIntArray *kl = ints(kvv);
    char bsnd[] = "BSND", bsh[] = "BSH", tnd[] = "TND";
    for (aclDataType dt : {ACL_FLOAT16, ACL_BF16})
        for (int form = 0; form < 3; form++) {
            /* form 0: BSND, S = 2; form 1: BSH, S = 1; form 2: TND, query lengths 1 and 3 */
            int64_t S1 = form == 0 ? 2 : 1;
            std::vector<int> rb = form == 2 ? std::vector<int>{0, 1, 1, 1} : std::vector<int>{};
            if (form != 2)
                for (int b = 0; b < 2; b++)
                    for (int64_t s = 0; s < S1; s++) rb.push_back(b);
            int64_t R = static_cast<int64_t>(rb.size());
            std::vector<double> Q = small(R * NQ * DK, dt, 71 + form), K = small(NB * PAGE * NKV * DK, dt, 72),
                                V = small(NB * PAGE * NKV * DV, dt, 73);
            /* blocks of 32 positions: batch 0 has 4 (the last cut at 100), batch 1 has 3 (cut at 70) */
            std::vector<double> TK;
            for (int64_t r = 0; r < R; r++)
                for (int64_t h = 0; h < NKV; h++) {
                    int64_t nblk = rb[r] == 0 ? 4 : 3;
                    TK.push_back((r + h) % nblk);
                    TK.push_back((r + h + 1 + (h == 1)) % nblk == (r + h) % nblk ? -1 : (r + h + 1 + (h == 1)) % nblk);
                    TK.push_back(r % 2 ? nblk - 1 : -1);
                    if (TK.back() == TK[TK.size() - 3] || TK.back() == TK[TK.size() - 2]) TK.back() = -1;
                }
            std::vector<int64_t> qs, ks, vs, tks, os;
            char *lay;
            if (form == 0) {
                qs = {2, S1, NQ, DK}, ks = {NB, PAGE, NKV, DK}, vs = {NB, PAGE, NKV, DV}, tks = {2, S1, NKV, C},
                os = {2, S1, NQ, DV}, lay = bsnd;
            } else if (form == 1) {
                qs = {2, S1, NQ * DK}, ks = {NB, PAGE, NKV * DK}, vs = {NB, PAGE, NKV * DV}, tks = {2, S1, NKV, C},
                os = {2, S1, NQ * DV}, lay = bsh;
            } else {
                qs = {R, NQ, DK}, ks = {NB, PAGE, NKV, DK}, vs = {NB, PAGE, NKV, DV}, tks = {R, NKV, C},
                os = {R, NQ, DV}, lay = tnd;
            }
            Dev q = make(qs, dt, Q), k = make(ks, dt, K), v = make(vs, dt, V), tk = make(tks, ACL_INT32, TK);
            Dev tb = make({2, COLS}, ACL_INT32, TB), o = make(os, dt, {7});
            aclIntArray *ql = form == 2 ? ints({1, 4}) : nullptr;
            double scale = 0.0722;
            RUN(S, aclnnNsaSelectedAttentionInfer, q.t, k.t, v.t, tk.t, nullptr, tb.t, ql, kl, lay, NQ, NKV, BLK, C,
                PAGE, scale, 0, o.t);
            std::vector<double> want = rounded(infer_reference(rb, Q, K, V, TK, TB, COLS, kvlen, PAGE, BLK, C, scale), dt);
            char what[96];
            snprintf(what, sizeof what, "NsaSelectedAttentionInfer %s %s", lay, dname(dt));
            compare(what, read(o), want, dt == ACL_FLOAT16 ? 4e-3 : 2e-2);
            if (form == 0 && dt == ACL_FLOAT16) {
                uint64_t ws = 0;
                aclOpExecutor *ex = nullptr;
                Dev q128 = make({2, S1, NQ, 128}, dt, {0}), tb0 = make({2, COLS}, ACL_INT32, {0});
                aclIntArray *long_kv = ints({100, 200});
                expect_code("NsaSelectedAttentionInfer null blockTableOptional (paged attention only)",
                            aclnnNsaSelectedAttentionInferGetWorkspaceSize(q.t, k.t, v.t, tk.t, nullptr, nullptr, nullptr,
                                                                           kl, lay, NQ, NKV, BLK, C, PAGE, scale, 0, o.t,
                                                                           &ws, &ex),
                            ACLNN_ERR_PARAM_NULLPTR);
                expect_code("NsaSelectedAttentionInfer null query",
                            aclnnNsaSelectedAttentionInferGetWorkspaceSize(nullptr, k.t, v.t, tk.t, nullptr, tb.t,
                                                                           nullptr, kl, lay, NQ, NKV, BLK, C, PAGE,
                                                                           scale, 0, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_NULLPTR);
                expect_code("NsaSelectedAttentionInfer query D 128",
                            aclnnNsaSelectedAttentionInferGetWorkspaceSize(q128.t, k.t, v.t, tk.t, nullptr, tb.t,
                                                                           nullptr, kl, lay, NQ, NKV, BLK, C, PAGE,
                                                                           scale, 0, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttentionInfer pageBlockSize 32 for 64-row cache blocks",
                            aclnnNsaSelectedAttentionInferGetWorkspaceSize(q.t, k.t, v.t, tk.t, nullptr, tb.t,
                                                                           nullptr, kl, lay, NQ, NKV, BLK, C, 32,
                                                                           scale, 0, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttentionInfer selectBlockSize 24",
                            aclnnNsaSelectedAttentionInferGetWorkspaceSize(q.t, k.t, v.t, tk.t, nullptr, tb.t,
                                                                           nullptr, kl, lay, NQ, NKV, 24, C, PAGE,
                                                                           scale, 0, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttentionInfer numHeads 3 with 2 key/value heads",
                            aclnnNsaSelectedAttentionInferGetWorkspaceSize(q.t, k.t, v.t, tk.t, nullptr, tb.t,
                                                                           nullptr, kl, lay, 3, NKV, BLK, C, PAGE,
                                                                           scale, 0, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                expect_code("NsaSelectedAttentionInfer key/value length 200 past the 2-block table",
                            aclnnNsaSelectedAttentionInferGetWorkspaceSize(q.t, k.t, v.t, tk.t, nullptr, tb.t,
                                                                           nullptr, long_kv, lay, NQ, NKV, BLK, C,
                                                                           PAGE, scale, 0, o.t, &ws, &ex),
                            ACLNN_ERR_PARAM_INVALID);
                /* a selected block past the batch's length fails at launch */
                std::vector<double> TKbad = TK;
                TKbad[0] = 4;
                Dev tkb = make(tks, ACL_INT32, TKbad);
                NN(aclnnNsaSelectedAttentionInferGetWorkspaceSize(q.t, k.t, v.t, tkb.t, nullptr, tb.t, nullptr, kl, lay,
                                                                  NQ, NKV, BLK, C, PAGE, scale, 0, o.t, &ws, &ex));
                g_checks++;
                aclnnStatus st = aclnnNsaSelectedAttentionInfer(nullptr, ws, ex, S);
                if (st == ACL_SUCCESS) st = static_cast<aclnnStatus>(aclrtSynchronizeStream(S));
                if (st == ACL_SUCCESS) {
                    printf("FAIL NsaSelectedAttentionInfer with block 4 of a 100-row batch (4 blocks) succeeded\n");
                    g_fail++;
                } else {
                    printf("error NsaSelectedAttentionInfer block 4 of 4: %d\n", static_cast<int>(st));
                }
                aclDestroyIntArray(long_kv);
                for (Dev *d : {&q128, &tb0, &tkb}) release(*d);
            }
            if (ql) aclDestroyIntArray(ql);
            for (Dev *d : {&q, &k, &v, &tk, &tb, &o}) release(*d);
        }
    aclDestroyIntArray(kl);
    printf("ok nsa selected attention infer\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    selected();
    selected_infer();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
