/* The quantisation and large-model utility operators against float64 host references:
 * aclnnQuantMatmul (V1, a float deqScale) and V2 (a UINT64 deqScale of align(n, 16)),
 * aclnnWeightQuantBatchMatmul (V1, both the fix-pipe path of m <= 64 and the vector path),
 * aclnnAscendAntiQuant (INT8 and packed INT4 in INT32), aclnnInplaceScatterUpdate (1-D and
 * (batch, offset) indices), aclnnApplyTopKTopP, and the MoE token permutation
 * (aclnnMoeTokenPermute / Unpermute and their Grad forms); plus the documented argument
 * errors (nullptr → 161001, data type and shape → 161002). */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_quant_matmul.h"
#include "aclnnop/aclnn_weight_quant_batch_matmul.h"
#include "aclnnop/aclnn_ascend_anti_quant.h"
#include "aclnnop/aclnn_scatter_update.h"
#include "aclnnop/aclnn_apply_top_k_top_p.h"
#include "aclnnop/aclnn_moe_token_permute.h"
#include "aclnnop/aclnn_moe_token_permute_grad.h"
#include "aclnnop/aclnn_moe_token_unpermute.h"
#include "aclnnop/aclnn_moe_token_unpermute_grad.h"
#include "aclnnop/aclnn_trans_quant_param.h"
#include <cstdlib>
#include <cstring>

static aclrtStream S;
static uint64_t ws = 0;
static aclOpExecutor *ex = nullptr;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else {
        printf("error %s: %s\n", what, test_msg());
    }
}

/* A UINT64 view of an INT64 device tensor (the test's put() writes INT64). */
static aclTensor *as_u64(const Dev &d) {
    Shape storage{numel(d.shape)};
    return aclCreateTensor(d.shape.data(), d.shape.size(), ACL_UINT64, d.strides.data(), 0, ACL_FORMAT_ND,
                           storage.data(), 1, d.mem);
}

/* The 64-bit quantisation parameter of a float scale (aclnnTransQuantParam's layout). */
static double qparam(float s, float *kept) {
    uint32_t b;
    memcpy(&b, &s, 4);
    b &= 0xFFFFE000u;
    memcpy(kept, &b, 4);
    return static_cast<double>(static_cast<uint64_t>(b) | (1ull << 46));
}

static double f16(double v) { return as_type(v, ACL_FLOAT16); }

static void section(const char *name, int fails_before) {
    if (g_fail == fails_before) printf("ok %s\n", name);
}

static void quant_matmul() {
    int f0 = g_fail;
    /* V1: [2, 3, 4] @ [2, 4, 5] + bias, * 0.01 (its truncated 64-bit parameter) */
    const int B = 2, M = 3, K = 4, N = 5;
    std::vector<double> A = values(B * M * K, ACL_INT8, 1), W = values(B * K * N, ACL_INT8, 2);
    std::vector<double> bias = values(N, ACL_INT32, 3);
    Dev x1 = make({B, M, K}, ACL_INT8, A), x2 = make({B, K, N}, ACL_INT8, W), b = make({N}, ACL_INT32, bias);
    Dev out = make({B, M, N}, ACL_FLOAT16, {0});
    float kept;
    qparam(0.01f, &kept);
    RUN(S, aclnnQuantMatmul, x1.t, x2.t, b.t, 0.01f, out.t);
    std::vector<double> want;
    for (int bi = 0; bi < B; bi++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = bias[j];
                for (int p = 0; p < K; p++) acc += A[(bi * M + i) * K + p] * W[(bi * K + p) * N + j];
                want.push_back(f16(acc * kept));
            }
    compare("QuantMatmul [2,3,4] @ [2,4,5] + bias, deqScale 0.01", read(out), want, 1e-3);
    /* V2: x1 given as [k, m] (adjX1), x2 [2, k, n] broadcast over the batch, per-column scales */
    Dev x1t = make({K, M}, ACL_INT8, A);
    std::vector<double> qs(16, 0), ks(N);
    for (int j = 0; j < N; j++) {
        float k2;
        qs[j] = qparam(0.05f * (j + 1), &k2);
        ks[j] = k2;
    }
    Dev dq = make({16}, ACL_INT64, qs);
    aclTensor *dqu = as_u64(dq);
    Dev out2 = make({B, M, N}, ACL_FLOAT16, {0});
    RUN(S, aclnnQuantMatmulV2, x1t.t, x2.t, nullptr, dqu, true, false, out2.t);
    want.clear();
    for (int bi = 0; bi < B; bi++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double acc = 0;
                for (int p = 0; p < K; p++) acc += A[p * M + i] * W[(bi * K + p) * N + j];
                want.push_back(f16(acc * ks[j]));
            }
    compare("QuantMatmulV2 adjX1 [k,m] with a batched x2, per-column deqScale", read(out2), want, 1e-3);
    expect_code("QuantMatmul null x2", aclnnQuantMatmulGetWorkspaceSize(x1.t, nullptr, b.t, 1.0f, out.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("QuantMatmulV2 null deqScale",
                aclnnQuantMatmulV2GetWorkspaceSize(x1t.t, x2.t, nullptr, nullptr, true, false, out2.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    Dev o32 = make({B, M, N}, ACL_FLOAT, {0});
    expect_code("QuantMatmul FLOAT out", aclnnQuantMatmulGetWorkspaceSize(x1.t, x2.t, b.t, 1.0f, o32.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev x2b = make({K, N}, ACL_INT8, W);
    expect_code("QuantMatmul x1 3-D with x2 2-D (no broadcast in V1)",
                aclnnQuantMatmulGetWorkspaceSize(x1.t, x2b.t, b.t, 1.0f, out.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev dq8 = make({8}, ACL_INT64, qs);
    aclTensor *dq8u = as_u64(dq8);
    expect_code("QuantMatmulV2 deqScale of 8 (n = 5 needs 16)",
                aclnnQuantMatmulV2GetWorkspaceSize(x1t.t, x2.t, nullptr, dq8u, true, false, out2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    section("quant_matmul", f0);
}

static void weight_quant_v1() {
    int f0 = g_fail;
    const int K = 8, N = 3;
    std::vector<double> W = values(K * N, ACL_INT8, 5);
    for (auto &w : W) w = std::fmod(w, 9);
    Dev x2 = make({K, N}, ACL_INT8, W);
    Dev bias = make({N}, ACL_FLOAT, {0.5, -1.25, 2});
    std::vector<double> bv = {0.5, -1.25, 2};
    /* the vector path (m = 65 > 64): ((x2 + 1) * 0.5 + addOffset) * mulScale, float16 steps */
    const int M = 65;
    std::vector<double> X = values(M * K, ACL_FLOAT16, 6);
    Dev x1 = make({M, K}, ACL_FLOAT16, X);
    std::vector<double> add = {0.25, -0.5, 1}, mul = {0.5, 2, 0.125};
    Dev a = make({N}, ACL_FLOAT16, add), m = make({N}, ACL_FLOAT16, mul);
    Dev out = make({M, N}, ACL_FLOAT16, {0});
    RUN(S, aclnnWeightQuantBatchMatmul, x1.t, x2.t, nullptr, nullptr, nullptr, a.t, m.t, bias.t, false, false, 0.5f,
        1.0f, out.t);
    std::vector<double> want;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = f16(bv[j]);
            for (int p = 0; p < K; p++) {
                double w = f16(f16(f16((W[p * N + j] + 1) * 0.5) + add[j]) * mul[j]);
                acc += X[i * K + p] * w;
            }
            want.push_back(f16(acc));
        }
    compare("WeightQuantBatchMatmul vector path (m 65)", read(out), want, 2e-3);
    /* the fix-pipe path (m = 2): (x2 + deqOffset) * deqScale */
    const int M2 = 2;
    Dev x1s = make({M2, K}, ACL_FLOAT16, X);
    std::vector<double> diag(32 * 32, 0);
    for (int i = 0; i < 32; i++) diag[i * 32 + i] = 1;
    Dev dm = make({32, 32}, ACL_INT8, diag);
    std::vector<double> off = {1, -2, 0}, qs(N), ks(N);
    for (int j = 0; j < N; j++) {
        float k;
        qs[j] = qparam(0.25f * (j + 1), &k);
        ks[j] = k;
    }
    Dev doff = make({N}, ACL_INT32, off), dsc = make({N}, ACL_INT64, qs);
    aclTensor *dscu = as_u64(dsc);
    Dev out2 = make({M2, N}, ACL_FLOAT16, {0});
    RUN(S, aclnnWeightQuantBatchMatmul, x1s.t, x2.t, dm.t, doff.t, dscu, nullptr, nullptr, nullptr, false, false,
        1.0f, 0.0f, out2.t);
    want.clear();
    for (int i = 0; i < M2; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int p = 0; p < K; p++) acc += X[i * K + p] * f16((W[p * N + j] + off[j]) * ks[j]);
            want.push_back(f16(acc));
        }
    compare("WeightQuantBatchMatmul fix-pipe path (m 2)", read(out2), want, 2e-3);
    expect_code("WeightQuantBatchMatmul m 2 without deqScale",
                aclnnWeightQuantBatchMatmulGetWorkspaceSize(x1s.t, x2.t, dm.t, doff.t, nullptr, nullptr, nullptr,
                                                            nullptr, false, false, 1.0f, 0.0f, out2.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    Dev x1f = make({M, K}, ACL_FLOAT, X);
    expect_code("WeightQuantBatchMatmul FLOAT x1",
                aclnnWeightQuantBatchMatmulGetWorkspaceSize(x1f.t, x2.t, nullptr, nullptr, nullptr, a.t, m.t, nullptr,
                                                            false, false, 1.0f, 0.0f, out.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev bad = make({2, N}, ACL_FLOAT16, add);
    expect_code("WeightQuantBatchMatmul addOffset [2, 3]",
                aclnnWeightQuantBatchMatmulGetWorkspaceSize(x1.t, x2.t, nullptr, nullptr, nullptr, bad.t, m.t,
                                                            nullptr, false, false, 1.0f, 0.0f, out.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    section("weight_quant_v1", f0);
}

static void anti_quant() {
    int f0 = g_fail;
    std::vector<double> X = values(8, ACL_INT8, 7), s = {0.5, -0.25, 0.125, 2}, o = {1, -3, 0.5, 0};
    Dev x = make({2, 4}, ACL_INT8, X), sc = make({4}, ACL_FLOAT, s), of = make({4}, ACL_FLOAT, o);
    Dev y = make({2, 4}, ACL_FLOAT16, {0});
    RUN(S, aclnnAscendAntiQuant, x.t, sc.t, of.t, 1, false, y.t);
    std::vector<double> want;
    for (int i = 0; i < 8; i++) want.push_back(f16((X[i] + o[i % 4]) * s[i % 4]));
    compare("AscendAntiQuant int8 -> f16, offset", read(y), want, 0);
    Dev yb = make({2, 4}, ACL_BF16, {0});
    RUN(S, aclnnAscendAntiQuant, x.t, sc.t, nullptr, 27, true, yb.t);
    want.clear();
    for (int i = 0; i < 8; i++) want.push_back(as_type(static_cast<float>(X[i] * s[i % 4] * s[i % 4]), ACL_BF16));
    compare("AscendAntiQuant int8 -> bf16, sqrtMode", read(yb), want, 0);
    /* packed int4: nibbles 0..7 of 0x8F7A3210 are 0 1 2 3 -6 7 -1 -8 (low first) */
    Dev xp = make({2, 1}, ACL_INT32, {static_cast<double>(static_cast<int32_t>(0x8F7A3210u)), 0x11111111});
    Dev s1 = make({1}, ACL_FLOAT, {0.5});
    Dev y8 = make({2, 8}, ACL_FLOAT16, {0});
    RUN(S, aclnnAscendAntiQuant, xp.t, s1.t, nullptr, 1, false, y8.t);
    compare("AscendAntiQuant packed int4 (INT32)", read(y8),
            {0, 0.5, 1, 1.5, -3, 3.5, -0.5, -4, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0);
    expect_code("AscendAntiQuant null scale", aclnnAscendAntiQuantGetWorkspaceSize(x.t, nullptr, nullptr, 1, false, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("AscendAntiQuant dstType 0", aclnnAscendAntiQuantGetWorkspaceSize(x.t, sc.t, nullptr, 0, false, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev xf = make({2, 4}, ACL_FLOAT16, X);
    expect_code("AscendAntiQuant FLOAT16 x", aclnnAscendAntiQuantGetWorkspaceSize(xf.t, sc.t, nullptr, 1, false, y.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("AscendAntiQuant y [2, 4] for packed x [2, 1]",
                aclnnAscendAntiQuantGetWorkspaceSize(xp.t, s1.t, nullptr, 1, false, y.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    section("anti_quant", f0);
}

static void scatter_update() {
    int f0 = g_fail;
    /* data [2, 2, 5, 3], updates [2, 2, 2, 3] at offsets (1, 3) along axis -2 */
    std::vector<double> D = values(60, ACL_FLOAT, 8), U = values(24, ACL_FLOAT, 9);
    Dev d = make({2, 2, 5, 3}, ACL_FLOAT, D), u = make({2, 2, 2, 3}, ACL_FLOAT, U);
    Dev idx = make({2}, ACL_INT64, {1, 3});
    RUN(S, aclnnInplaceScatterUpdate, d.t, idx.t, u.t, -2);
    std::vector<double> want(D);
    int off[2] = {1, 3};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int k = 0; k < 2; k++)
                for (int l = 0; l < 3; l++) want[((i * 2 + j) * 5 + off[i] + k) * 3 + l] = U[((i * 2 + j) * 2 + k) * 3 + l];
    compare("InplaceScatterUpdate 1-D indices, axis -2", read(d), want, 0);
    /* (batch, offset) pairs along the last axis, float16 data */
    std::vector<double> D2 = values(2 * 3 * 6, ACL_FLOAT16, 10), U2 = values(3 * 2, ACL_FLOAT16, 11);
    Dev d2 = make({2, 3, 6}, ACL_FLOAT16, D2), u2 = make({1, 3, 2}, ACL_FLOAT16, U2);
    Dev idx2 = make({1, 2}, ACL_INT32, {1, 4});
    RUN(S, aclnnInplaceScatterUpdate, d2.t, idx2.t, u2.t, 2);
    want = D2;
    for (int j = 0; j < 3; j++)
        for (int l = 0; l < 2; l++) want[(1 * 3 + j) * 6 + 4 + l] = U2[j * 2 + l];
    compare("InplaceScatterUpdate (batch, offset) indices, axis 2", read(d2), want, 0);
    expect_code("InplaceScatterUpdate null updates",
                aclnnInplaceScatterUpdateGetWorkspaceSize(d.t, idx.t, nullptr, -2, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("InplaceScatterUpdate axis 0", aclnnInplaceScatterUpdateGetWorkspaceSize(d.t, idx.t, u.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("InplaceScatterUpdate float16 updates into float data",
                aclnnInplaceScatterUpdateGetWorkspaceSize(d.t, idx2.t, u2.t, 2, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev fidx = make({2}, ACL_FLOAT, {1, 3});
    expect_code("InplaceScatterUpdate FLOAT indices",
                aclnnInplaceScatterUpdateGetWorkspaceSize(d.t, fidx.t, u.t, -2, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    section("scatter_update", f0);
}

/* The reference page's formulas, row by row, in float64. */
static std::vector<double> topk_topp_ref(const std::vector<double> &x, int rows, int v, const double *p,
                                         const int *k) {
    std::vector<double> out(x);
    for (int r = 0; r < rows; r++) {
        std::vector<int> ord(v);
        std::iota(ord.begin(), ord.end(), 0);
        std::stable_sort(ord.begin(), ord.end(), [&](int a, int b) { return x[r * v + a] < x[r * v + b]; });
        std::vector<double> sv(v);
        for (int i = 0; i < v; i++) sv[i] = x[r * v + ord[i]];
        if (k && k[r] > 0 && k[r] < v) {
            double thr = sv[v - k[r]];
            for (auto &s : sv)
                if (s < thr) s = -INFINITY;
        }
        if (p) {
            double mx = sv[v - 1], sum = 0, cum = 0;
            for (auto s : sv) sum += std::exp(s - mx);
            for (int i = 0; i < v - 1; i++) {
                cum += std::exp(sv[i] - mx) / sum;
                if (cum <= 1 - p[r]) sv[i] = -INFINITY;
            }
        }
        for (int i = 0; i < v; i++) out[r * v + ord[i]] = sv[i];
    }
    return out;
}

static void top_k_top_p() {
    int f0 = g_fail;
    const int R = 3, V = 6;
    std::vector<double> X = {0.3, 2.1, -1.0, 1.4, 0.9, -0.2, 1.0, 1.1, 0.2, -3.0, 2.5, 0.05, -0.7, 0.4, 3.0, 0.8, 1.9, -1.5};
    for (auto &e : X) e = as_type(e, ACL_FLOAT);
    double p[R] = {0.55, 0.9, 0.3};
    int k[R] = {3, 0, 6};
    Dev x = make({R, V}, ACL_FLOAT, X), pt = make({R}, ACL_FLOAT, {p[0], p[1], p[2]});
    Dev kt = make({R}, ACL_INT32, {3, 0, 6});
    Dev out = make({R, V}, ACL_FLOAT, {0});
    RUN(S, aclnnApplyTopKTopP, x.t, pt.t, kt.t, out.t);
    compare("ApplyTopKTopP p and k", read(out), topk_topp_ref(X, R, V, p, k), 1e-6);
    RUN(S, aclnnApplyTopKTopP, x.t, nullptr, kt.t, out.t);
    compare("ApplyTopKTopP k only", read(out), topk_topp_ref(X, R, V, nullptr, k), 0);
    RUN(S, aclnnApplyTopKTopP, x.t, pt.t, nullptr, out.t);
    compare("ApplyTopKTopP p only", read(out), topk_topp_ref(X, R, V, p, nullptr), 1e-6);
    expect_code("ApplyTopKTopP p and k both null",
                aclnnApplyTopKTopPGetWorkspaceSize(x.t, nullptr, nullptr, out.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    Dev p16 = make({R}, ACL_FLOAT16, {0.5});
    expect_code("ApplyTopKTopP float16 p for float logits",
                aclnnApplyTopKTopPGetWorkspaceSize(x.t, p16.t, kt.t, out.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev k4 = make({4}, ACL_INT32, {1});
    expect_code("ApplyTopKTopP k of 4 rows for 3",
                aclnnApplyTopKTopPGetWorkspaceSize(x.t, pt.t, k4.t, out.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    section("top_k_top_p", f0);
}

static void moe_token() {
    int f0 = g_fail;
    const int T = 4, K = 2, H = 3, TK = T * K;
    std::vector<double> X = values(T * H, ACL_FLOAT, 12), E = {2, 0, 1, 0, 2, 1, 0, 3};
    Dev tok = make({T, H}, ACL_FLOAT, X), idx = make({T, K}, ACL_INT32, E);
    std::vector<int> ord(TK);
    std::iota(ord.begin(), ord.end(), 0);
    std::stable_sort(ord.begin(), ord.end(), [&](int a, int b) { return E[a] < E[b]; });
    std::vector<double> S_(TK), P;
    for (int i = 0; i < TK; i++) S_[ord[i]] = i;
    for (int i = 0; i < TK; i++)
        for (int h = 0; h < H; h++) P.push_back(X[(ord[i] / K) * H + h]);
    Dev perm = make({TK, H}, ACL_FLOAT, {0}), si = make({TK}, ACL_INT32, {0});
    RUN(S, aclnnMoeTokenPermute, tok.t, idx.t, 0, false, perm.t, si.t);
    compare("MoeTokenPermute permuted tokens", read(perm), P, 0);
    compare("MoeTokenPermute sortedIndices", read(si), S_, 0);
    Dev perm5 = make({5, H}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeTokenPermute, tok.t, idx.t, 5, false, perm5.t, si.t);
    compare("MoeTokenPermute numOutTokens 5", read(perm5), std::vector<double>(P.begin(), P.begin() + 5 * H), 0);
    /* PermuteGrad of the first 5 rows kept: dropped pairs add nothing */
    std::vector<double> G = values(5 * H, ACL_FLOAT, 13);
    Dev g = make({5, H}, ACL_FLOAT, G), gt = make({T, H}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeTokenPermuteGrad, g.t, si.t, K, false, gt.t);
    std::vector<double> want(T * H, 0);
    for (int j = 0; j < TK; j++)
        if (S_[j] < 5)
            for (int h = 0; h < H; h++) want[(j / K) * H + h] += G[static_cast<int>(S_[j]) * H + h];
    compare("MoeTokenPermuteGrad with dropped tokens", read(gt), want, 1e-6);
    /* Unpermute with probs restores sum_k p * token */
    std::vector<double> PR = {0.75, 0.25, 0.5, 0.5, 0.125, 0.875, 1, 0};
    Dev pr = make({T, K}, ACL_FLOAT, PR), un = make({T, H}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeTokenUnpermute, perm.t, si.t, pr.t, false, nullptr, un.t);
    want.assign(T * H, 0);
    for (int j = 0; j < TK; j++)
        for (int h = 0; h < H; h++) want[(j / K) * H + h] += P[static_cast<int>(S_[j]) * H + h] * PR[j];
    compare("MoeTokenUnpermute with probs", read(un), want, 1e-6);
    /* UnpermuteGrad: the permuted tokens' and the probabilities' gradients */
    std::vector<double> GU = values(T * H, ACL_FLOAT, 14);
    Dev gu = make({T, H}, ACL_FLOAT, GU), gp = make({TK, H}, ACL_FLOAT, {7}), gpr = make({T, K}, ACL_FLOAT, {7});
    RUN(S, aclnnMoeTokenUnpermuteGrad, perm.t, gu.t, si.t, pr.t, false, nullptr, gp.t, gpr.t);
    std::vector<double> wgp(TK * H, 0), wpr(TK, 0);
    for (int j = 0; j < TK; j++) {
        int r = static_cast<int>(S_[j]);
        for (int h = 0; h < H; h++) {
            wgp[r * H + h] = GU[(j / K) * H + h] * PR[j];
            wpr[j] += P[r * H + h] * GU[(j / K) * H + h];
        }
    }
    compare("MoeTokenUnpermuteGrad permutedTokensGrad", read(gp), wgp, 1e-6);
    compare("MoeTokenUnpermuteGrad probsGrad", read(gpr), wpr, 1e-6);
    /* without probs (top-k 1) and without the permuted tokens */
    Dev s1 = make({T}, ACL_INT32, {2, 0, 3, 1}), g1 = make({T, H}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeTokenUnpermuteGrad, nullptr, gu.t, s1.t, nullptr, false, nullptr, g1.t, nullptr);
    want.assign(T * H, 0);
    int s1v[T] = {2, 0, 3, 1};
    for (int j = 0; j < T; j++)
        for (int h = 0; h < H; h++) want[s1v[j] * H + h] = GU[j * H + h];
    compare("MoeTokenUnpermuteGrad without probs", read(g1), want, 0);
    expect_code("MoeTokenPermute null tokens",
                aclnnMoeTokenPermuteGetWorkspaceSize(nullptr, idx.t, 0, false, perm.t, si.t, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeTokenPermute paddedMode true",
                aclnnMoeTokenPermuteGetWorkspaceSize(tok.t, idx.t, 0, true, perm.t, si.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    Dev si64 = make({TK}, ACL_INT64, {0});
    expect_code("MoeTokenPermute INT64 sortedIndicesOut",
                aclnnMoeTokenPermuteGetWorkspaceSize(tok.t, idx.t, 0, false, perm.t, si64.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeTokenUnpermute null sortedIndices",
                aclnnMoeTokenUnpermuteGetWorkspaceSize(perm.t, nullptr, pr.t, false, nullptr, un.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeTokenUnpermuteGrad probs without permuteTokens",
                aclnnMoeTokenUnpermuteGradGetWorkspaceSize(nullptr, gu.t, si.t, pr.t, false, nullptr, gp.t, gpr.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeTokenPermuteGrad numTopk 3 for 8 indices",
                aclnnMoeTokenPermuteGradGetWorkspaceSize(g.t, si.t, 3, false, gt.t, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    section("moe_token", f0);
}

/* aclnnTransQuantParam (V1, on the host): scales whole with bit 46, offsets rounded half away
 * from zero and saturated into bits 37-45, the count padded to 16 unless it is 1. */
static void trans_quant_param() {
    int f0 = g_fail;
    auto bits = [](float f) {
        uint32_t b;
        memcpy(&b, &f, 4);
        return static_cast<uint64_t>(b);
    };
    const float scale[2] = {1.2345678f, -2.0f}, offset[3] = {1.5f, -300.0f, -2.5f};
    uint64_t *q = nullptr, n = 0;
    g_checks++;
    if (aclnnTransQuantParam(scale, 2, offset, 3, &q, &n) != ACLNN_SUCCESS || n != 16 || q == nullptr) {
        printf("FAIL TransQuantParam: size %lu\n", static_cast<unsigned long>(n));
        g_fail++;
    } else {
        uint64_t want[16] = {(bits(1.2345678f) | (1ull << 46)) & 0x4000FFFFFFFFull, (bits(-2.0f) | (1ull << 46)) & 0x4000FFFFFFFFull, 0};
        want[0] |= 2ull << 37;                 /* round(1.5) = 2 */
        want[1] |= (0x100ull) << 37;           /* -300 saturates to -256 */
        want[2] |= (static_cast<uint64_t>(-3) & 0x1FF) << 37; /* round(-2.5) = -3, no scale */
        for (int i = 0; i < 16; i++) {
            g_checks++;
            if (q[i] != want[i]) {
                printf("FAIL TransQuantParam[%d] = %#lx, expected %#lx\n", i, static_cast<unsigned long>(q[i]),
                       static_cast<unsigned long>(want[i]));
                g_fail++;
            }
        }
        free(q);
    }
    q = nullptr;
    g_checks++;
    if (aclnnTransQuantParam(scale, 1, nullptr, 0, &q, &n) != ACLNN_SUCCESS || n != 1 ||
        q[0] != (bits(1.2345678f) | (1ull << 46))) {
        printf("FAIL TransQuantParam of one scale\n");
        g_fail++;
    }
    free(q);
    expect_code("TransQuantParam null scaleArray", aclnnTransQuantParam(nullptr, 2, offset, 3, &q, &n),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TransQuantParam offsetSize without offsetArray", aclnnTransQuantParam(scale, 2, nullptr, 3, &q, &n),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("TransQuantParam null quantParam", aclnnTransQuantParam(scale, 2, offset, 3, nullptr, &n),
                ACLNN_ERR_PARAM_NULLPTR);
    section("trans_quant_param", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    quant_matmul();
    weight_quant_v1();
    anti_quant();
    scatter_update();
    top_k_top_p();
    moe_token();
    trans_quant_param();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
