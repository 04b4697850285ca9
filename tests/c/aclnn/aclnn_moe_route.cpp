/* MoE routing operators against host references: aclnnMoeInitRoutingV2 (stable sort by
 * expert; drop-less with activeNum truncation and cumsum or count histograms; drop/pad with
 * an [E, C, H] block, dropped tokens -1 and zero padding, counts before capacity); plus the
 * documented argument errors (nullptr → 161001, data type and shape → 161002, the shape
 * inference's attribute rules → 561002). aclnnMoeReRouting (tokens received rank-major after the
 * all-to-all reordered expert-major: gather index, per-token scales, counts per expert). */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_moe_init_routing_v2.h"
#include "aclnnop/aclnn_moe_re_routing.h"

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

static void section(const char *name, int fails_before) {
    if (g_fail == fails_before) printf("ok %s\n", name);
}

/* One case: experts ev[j] = (j * 5 + j / 4) % E; outputs start as the sentinel 7. */
static void v2_case(const char *what, aclDataType dt, int n, int H, int K, int E, int active, int cap, int mode,
                    int flag, bool beforeFlag) {
    std::vector<double> xv = values(n * H, dt, 31), ev(n * K);
    for (int j = 0; j < n * K; j++) ev[j] = (j * 5 + j / 4) % E;
    int nk = n * K, rows = active > 0 ? std::min(nk, active) : nk;
    Dev x = make({n, H}, dt, xv), e = make({n, K}, ACL_INT32, ev);
    Dev ox = mode == 1 ? make({E, cap, H}, dt, {7}) : make({rows, H}, dt, {7});
    Dev ori = make({nk}, ACL_INT32, {7}), ot = make({E}, ACL_INT32, {7}), ob = make({E}, ACL_INT32, {7});
    RUN(S, aclnnMoeInitRoutingV2, x.t, e.t, active, cap, E, mode, flag, beforeFlag, ox.t, ori.t, ot.t, ob.t);
    std::vector<int> order(nk);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ev[a] < ev[b]; });
    std::vector<double> cnt(E, 0);
    for (int j = 0; j < nk; j++) cnt[static_cast<int>(ev[j])]++;
    std::vector<double> wri(nk, -1), wx, wt(E, 7), wb(E, 7);
    if (mode == 1) {
        wx.assign(E * cap * H, 0);
        std::vector<int> fill(E, 0);
        for (int j : order) {
            int ex_ = static_cast<int>(ev[j]);
            if (fill[ex_] >= cap) continue;
            int slot = ex_ * cap + fill[ex_]++;
            wri[j] = slot;
            for (int c = 0; c < H; c++) wx[slot * H + c] = xv[(j / K) * H + c];
        }
        if (beforeFlag) wb = cnt;
    } else {
        wx.assign(rows * H, 0);
        for (int i = 0; i < nk; i++) {
            wri[order[i]] = i;
            if (i < rows)
                for (int c = 0; c < H; c++) wx[i * H + c] = xv[(order[i] / K) * H + c];
        }
        if (flag == 2) wt = cnt;
        if (flag == 1) {
            double s = 0;
            for (int i = 0; i < E; i++) wt[i] = s += cnt[i];
        }
    }
    std::string w(what);
    compare((w + " expandedXOut").c_str(), read(ox), wx, 0);
    compare((w + " expandedRowIdxOut").c_str(), read(ori), wri, 0);
    compare((w + " expertTokensCountOrCumsumOut").c_str(), read(ot), wt, 0);
    compare((w + " expertTokensBeforeCapacityOut").c_str(), read(ob), wb, 0);
}

static void moe_init_routing_v2() {
    int f0 = g_fail;
    v2_case("drop-less FLOAT [6,5] K3 E8 all rows, cumsum", ACL_FLOAT, 6, 5, 3, 8, 0, 0, 0, 1, false);
    v2_case("drop-less FLOAT16 [5,4] K2 E4 activeNum 7, count", ACL_FLOAT16, 5, 4, 2, 4, 7, 0, 0, 2, false);
    v2_case("drop-less BFLOAT16 [4,8] K2 E6 activeNum 100, no counts", ACL_BF16, 4, 8, 2, 6, 100, 0, 0, 0, false);
    v2_case("drop/pad FLOAT [8,3] K2 E4 capacity 3, before-capacity counts", ACL_FLOAT, 8, 3, 2, 4, 0, 3, 1, 0, true);
    v2_case("drop/pad FLOAT16 [6,4] K3 E5 capacity 6, no counts", ACL_FLOAT16, 6, 4, 3, 5, 0, 6, 1, 0, false);
    /* documented errors */
    Dev x = make({3, 4}, ACL_FLOAT, values(12, ACL_FLOAT, 5)), e = make({3, 2}, ACL_INT32, {0, 1, 2, 3, 0, 1});
    Dev ox = make({6, 4}, ACL_FLOAT, {0}), ori = make({6}, ACL_INT32, {0}), ot = make({4}, ACL_INT32, {0});
    Dev e64 = make({3, 2}, ACL_INT64, {0}), ori5 = make({5}, ACL_INT32, {0}), ox16 = make({6, 4}, ACL_FLOAT16, {0});
    Dev ot64 = make({4}, ACL_INT64, {0}), ox5 = make({5, 4}, ACL_FLOAT, {0});
    auto call = [&](aclTensor *xt, aclTensor *et, int64_t active, int64_t cap, int64_t E, int64_t drop, int64_t flag,
                    aclTensor *xo, aclTensor *rio, aclTensor *to) {
        return aclnnMoeInitRoutingV2GetWorkspaceSize(xt, et, active, cap, E, drop, flag, false, xo, rio, to, nullptr,
                                                     &ws, &ex);
    };
    expect_code("MoeInitRoutingV2 null x", call(nullptr, e.t, 0, 0, 4, 0, 1, ox.t, ori.t, ot.t),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeInitRoutingV2 null expertTokensCountOrCumsumOut with flag 1",
                call(x.t, e.t, 0, 0, 4, 0, 1, ox.t, ori.t, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeInitRoutingV2 INT64 expertIdx", call(x.t, e64.t, 0, 0, 4, 0, 1, ox.t, ori.t, ot.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRoutingV2 FLOAT16 expandedXOut for FLOAT x", call(x.t, e.t, 0, 0, 4, 0, 1, ox16.t, ori.t, ot.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRoutingV2 INT64 counts", call(x.t, e.t, 0, 0, 4, 0, 1, ox.t, ori.t, ot64.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRoutingV2 expandedRowIdxOut [5] for 6", call(x.t, e.t, 0, 0, 4, 0, 1, ox.t, ori5.t, ot.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRoutingV2 expandedXOut [5,4] for all 6 rows", call(x.t, e.t, 0, 0, 4, 0, 1, ox5.t, ori.t, ot.t),
                ACLNN_ERR_PARAM_INVALID);
    const int TILING = 561002;
    expect_code("MoeInitRoutingV2 activeNum -1", call(x.t, e.t, -1, 0, 4, 0, 1, ox.t, ori.t, ot.t), TILING);
    expect_code("MoeInitRoutingV2 dropPadMode 2", call(x.t, e.t, 0, 0, 4, 2, 1, ox.t, ori.t, ot.t), TILING);
    expect_code("MoeInitRoutingV2 flag 3", call(x.t, e.t, 0, 0, 4, 0, 3, ox.t, ori.t, ot.t), TILING);
    expect_code("MoeInitRoutingV2 flag 1 with expertNum 0", call(x.t, e.t, 0, 0, 0, 0, 1, ox.t, ori.t, ot.t), TILING);
    expect_code("MoeInitRoutingV2 drop/pad capacity 0", call(x.t, e.t, 0, 0, 4, 1, 0, ox.t, ori.t, ot.t), TILING);
    expect_code("MoeInitRoutingV2 drop/pad capacity 4 > 3 rows", call(x.t, e.t, 0, 4, 4, 1, 0, ox.t, ori.t, ot.t),
                TILING);
    section("moe_init_routing_v2", f0);
}

/* One MoeReRouting case: counts[r][e] = (r * 3 + e * 2 + 1) % 4 (a zero block included);
 * outputs start as the sentinel 7. */
static void re_routing_case(const char *what, aclDataType dt, aclDataType ct, int N, int E, int H, bool scales) {
    std::vector<double> cv(N * E);
    for (int r = 0; r < N; r++)
        for (int e = 0; e < E; e++) cv[r * E + e] = (r * 3 + e * 2 + 1) % 4;
    int A = static_cast<int>(std::accumulate(cv.begin(), cv.end(), 0.0));
    std::vector<double> tv = values(A * H, dt, 17), sv = values(A, ACL_FLOAT, 23);
    Dev t = make({A, H}, dt, tv), c = make({N, E}, ct, cv), s = make({A}, ACL_FLOAT, sv);
    Dev ot = make({A, H}, dt, {7}), os = make({A}, ACL_FLOAT, {7}), oi = make({A}, ACL_INT32, {7});
    Dev on = make({E}, ct, {7});
    RUN(S, aclnnMoeReRouting, t.t, c.t, scales ? s.t : nullptr, 1, 0, ot.t, scales ? os.t : nullptr, oi.t, on.t);
    /* host reference: source offsets rank-major, destination expert-major */
    std::vector<int> off(N * E);
    for (int i = 0, o = 0; i < N * E; i++) off[i] = o, o += static_cast<int>(cv[i]);
    std::vector<double> wt, ws_, wi, wn(E, 0);
    for (int e = 0; e < E; e++)
        for (int r = 0; r < N; r++) {
            wn[e] += cv[r * E + e];
            for (int k = 0; k < static_cast<int>(cv[r * E + e]); k++) {
                int src = off[r * E + e] + k;
                wi.push_back(src);
                ws_.push_back(sv[src]);
                for (int h = 0; h < H; h++) wt.push_back(tv[src * H + h]);
            }
        }
    std::string w(what);
    compare((w + " permuteTokensOut").c_str(), read(ot), wt, 0);
    compare((w + " permuteTokenIdxOut").c_str(), read(oi), wi, 0);
    compare((w + " expertTokenNumOut").c_str(), read(on), wn, 0);
    if (scales) compare((w + " permutePerTokenScalesOut").c_str(), read(os), ws_, 0);
}

static void moe_re_routing() {
    int f0 = g_fail;
    re_routing_case("ReRouting FLOAT16 N2 E3 H8 INT32 counts", ACL_FLOAT16, ACL_INT32, 2, 3, 8, false);
    re_routing_case("ReRouting BFLOAT16 N4 E2 H5 INT64 counts, scales", ACL_BF16, ACL_INT64, 4, 2, 5, true);
    re_routing_case("ReRouting INT8 N3 E4 H16 INT32 counts, scales", ACL_INT8, ACL_INT32, 3, 4, 16, true);
    /* documented errors */
    Dev t = make({6, 4}, ACL_FLOAT16, values(24, ACL_FLOAT16, 3)), c = make({2, 2}, ACL_INT32, {1, 2, 2, 1});
    Dev ot = make({6, 4}, ACL_FLOAT16, {0}), oi = make({6}, ACL_INT32, {0}), on = make({2}, ACL_INT32, {0});
    Dev tf = make({6, 4}, ACL_FLOAT, {0}), on64 = make({2}, ACL_INT64, {0}), oi5 = make({5}, ACL_INT32, {0});
    Dev s = make({6}, ACL_FLOAT, {1}), big = make({2, 2}, ACL_INT32, {3, 2, 2, 1});
    Dev neg = make({2, 2}, ACL_INT32, {1, -2, 2, 1});
    auto call = [&](aclTensor *tt, aclTensor *ct, aclTensor *st, int64_t type, int64_t idx, aclTensor *o,
                    aclTensor *so, aclTensor *io, aclTensor *no) {
        return aclnnMoeReRoutingGetWorkspaceSize(tt, ct, st, type, idx, o, so, io, no, &ws, &ex);
    };
    expect_code("MoeReRouting null tokens", call(nullptr, c.t, nullptr, 1, 0, ot.t, nullptr, oi.t, on.t),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeReRouting scales without permutePerTokenScalesOut",
                call(t.t, c.t, s.t, 1, 0, ot.t, nullptr, oi.t, on.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeReRouting FLOAT tokens", call(tf.t, c.t, nullptr, 1, 0, tf.t, nullptr, oi.t, on.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeReRouting INT64 expertTokenNumOut for INT32 counts",
                call(t.t, c.t, nullptr, 1, 0, ot.t, nullptr, oi.t, on64.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeReRouting permuteTokenIdxOut [5] for 6 tokens",
                call(t.t, c.t, nullptr, 1, 0, ot.t, nullptr, oi5.t, on.t), ACLNN_ERR_PARAM_INVALID);
    const int TILING = 561002;
    expect_code("MoeReRouting expertTokenNumType 0 (cumsum)", call(t.t, c.t, nullptr, 0, 0, ot.t, nullptr, oi.t, on.t),
                TILING);
    expect_code("MoeReRouting idxType 1 (scatter)", call(t.t, c.t, nullptr, 1, 1, ot.t, nullptr, oi.t, on.t), TILING);
    /* counts summing past the token rows, and a negative count, fail at launch */
    g_checks++;
    if (call(t.t, big.t, nullptr, 1, 0, ot.t, nullptr, oi.t, on.t) == ACLNN_SUCCESS) {
        void *w = nullptr;
        if (ws) aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST);
        aclnnStatus st = aclnnMoeReRouting(w, ws, ex, S);
        aclError sy = aclrtSynchronizeStream(S);
        if (st == ACLNN_SUCCESS && sy == ACL_SUCCESS) {
            printf("FAIL MoeReRouting counts summing to 8 over 6 tokens ran\n");
            g_fail++;
        } else {
            printf("error MoeReRouting counts past the tokens: %s\n", test_msg());
        }
        if (w) aclrtFree(w);
    } else {
        printf("error MoeReRouting counts past the tokens (at GetWorkspaceSize): %s\n", test_msg());
    }
    g_checks++;
    if (call(t.t, neg.t, nullptr, 1, 0, ot.t, nullptr, oi.t, on.t) == ACLNN_SUCCESS) {
        aclnnStatus st = aclnnMoeReRouting(nullptr, ws, ex, S);
        aclError sy = aclrtSynchronizeStream(S);
        if (st == ACLNN_SUCCESS && sy == ACL_SUCCESS) {
            printf("FAIL MoeReRouting a negative count ran\n");
            g_fail++;
        } else {
            printf("error MoeReRouting negative count: %s\n", test_msg());
        }
    }
    section("moe_re_routing", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    moe_init_routing_v2();
    moe_re_routing();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
