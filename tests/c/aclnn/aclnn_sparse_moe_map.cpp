/* aclnnCoalesceSparse and the routing-map MoE permutation against host references, with their
 * documented argument errors (nullptr → 161001, data type and shape → 161002):
 * - CoalesceSparse: CANN's own example (ops-math conversion/coalesce_sparse: a permutation as
 *   uniqueIndices), duplicates summed (INT32 and FLOAT16 values, a dense trailing dimension),
 *   newValues added into; a row outside the output fails the launch;
 * - MoeTokenPermuteWithRoutingMap in both modes, with probs; MoeTokenUnpermuteWithRoutingMap in
 *   both modes; the gradients of both against the adjoint of the forward (every gradient is
 *   checked as <grad, J v> = <J^T grad, v> against the host forward). */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_coalesce_sparse.h"
#include "aclnnop/aclnn_moe_token_permute_with_routing_map.h"
#include "aclnnop/aclnn_moe_token_permute_with_routing_map_grad.h"
#include "aclnnop/aclnn_moe_token_unpermute_with_routing_map.h"
#include "aclnnop/aclnn_moe_token_unpermute_with_routing_map_grad.h"

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

static void coalesce_sparse() {
    int f0 = g_fail;
    /* CANN's example: eight distinct entries, uniqueIndices a permutation */
    std::vector<double> u = {5, 1, 6, 4, 7, 0, 3, 2};
    std::vector<double> idx = {17, 17, 1,  0, 3, 17, 1, 8,  19, 10, 13, 6,  13, 16, 0, 15,
                               19, 14, 5, 15, 2, 8,  18, 5, 5,  2,  0,  13, 4,  5,  9, 1};
    std::vector<double> val = {148.25, -706.5, 178.625, 399.5, -795.5, -171.875, 388.75, -171.625};
    Dev ul = make({1}, ACL_INT32, {8}), ui = make({8}, ACL_INT32, u), ix = make({8, 4}, ACL_INT32, idx);
    Dev v = make({8}, ACL_FLOAT, val), ni = make({8, 4}, ACL_INT32, {0}), nv = make({8}, ACL_FLOAT, {0});
    RUN(S, aclnnCoalesceSparse, ul.t, ui.t, ix.t, v.t, ni.t, nv.t);
    std::vector<double> wi(32), wv(8);
    for (int i = 0; i < 8; i++) {
        int r = static_cast<int>(u[i]);
        wv[r] = val[i];
        for (int c = 0; c < 4; c++) wi[r * 4 + c] = idx[i * 4 + c];
    }
    compare("CoalesceSparse CANN example newIndices", read(ni), wi, 0);
    compare("CoalesceSparse CANN example newValues", read(nv), wv, 0);
    /* duplicates: five entries onto three rows, values [5, 2] (a dense trailing dimension),
     * INT64 indices, INT32 and FLOAT16 values; newValues starts at 1 and is added into */
    std::vector<double> u2 = {2, 0, 2, 1, 0}, ix2 = {3, 1, 0, 0, 3, 1, 1, 2, 0, 0};
    for (aclDataType dt : {ACL_INT32, ACL_FLOAT16}) {
        std::vector<double> v2 = values(10, dt, 9);
        Dev ul2 = make({3}, ACL_INT64, {0}), ui2 = make({5}, ACL_INT64, u2), ixt = make({5, 2}, ACL_INT64, ix2);
        Dev vt = make({5, 2}, dt, v2), nit = make({3, 2}, ACL_INT64, {0}), nvt = make({3, 2}, dt, {1});
        RUN(S, aclnnCoalesceSparse, ul2.t, ui2.t, ixt.t, vt.t, nit.t, nvt.t);
        std::vector<double> wi2(6), wv2(6, 1);
        for (int i = 0; i < 5; i++) {
            int r = static_cast<int>(u2[i]);
            for (int c = 0; c < 2; c++) {
                wi2[r * 2 + c] = ix2[i * 2 + c];
                wv2[r * 2 + c] += v2[i * 2 + c];
            }
        }
        compare(dt == ACL_INT32 ? "CoalesceSparse INT32 sums" : "CoalesceSparse FLOAT16 sums", read(nvt),
                dt == ACL_INT32 ? wv2 : std::vector<double>(wv2.begin(), wv2.end()), dt == ACL_INT32 ? 0 : 2e-3);
        compare("CoalesceSparse duplicate rows' indices", read(nit), wi2, 0);
    }
    /* errors */
    Dev v64 = make({8}, ACL_INT64, {0}), nv16 = make({8}, ACL_FLOAT16, {0}), ix1 = make({8}, ACL_INT32, {0});
    Dev ni5 = make({5, 4}, ACL_INT32, {0});
    expect_code("CoalesceSparse null uniqueIndices",
                aclnnCoalesceSparseGetWorkspaceSize(ul.t, nullptr, ix.t, v.t, ni.t, nv.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("CoalesceSparse INT64 values",
                aclnnCoalesceSparseGetWorkspaceSize(ul.t, ui.t, ix.t, v64.t, ni.t, v64.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CoalesceSparse FLOAT16 newValues for FLOAT values",
                aclnnCoalesceSparseGetWorkspaceSize(ul.t, ui.t, ix.t, v.t, ni.t, nv16.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CoalesceSparse 1-D indices",
                aclnnCoalesceSparseGetWorkspaceSize(ul.t, ui.t, ix1.t, v.t, ni.t, nv.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("CoalesceSparse newIndices [5, 4] for newValues [8]",
                aclnnCoalesceSparseGetWorkspaceSize(ul.t, ui.t, ix.t, v.t, ni5.t, nv.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* a uniqueIndices entry past the output's rows fails the launch */
    Dev bad = make({8}, ACL_INT32, {0, 1, 2, 3, 4, 5, 6, 8});
    g_checks++;
    if (aclnnCoalesceSparseGetWorkspaceSize(ul.t, bad.t, ix.t, v.t, ni.t, nv.t, &ws, &ex) == ACLNN_SUCCESS) {
        aclnnStatus st = aclnnCoalesceSparse(nullptr, ws, ex, S);
        aclError sy = aclrtSynchronizeStream(S);
        if (st == ACLNN_SUCCESS && sy == ACL_SUCCESS) {
            printf("FAIL CoalesceSparse uniqueIndices 8 of 8 rows ran\n");
            g_fail++;
        } else {
            printf("error CoalesceSparse row past the output: %s\n", test_msg());
        }
    } else {
        printf("FAIL CoalesceSparse row past the output refused before launch\n");
        g_fail++;
    }
    section("coalesce_sparse", f0);
}

/* routing map [T, E]: token t goes to experts (t + 0) % E and (t * 2 + 1) % E (two distinct) */
static const int T = 5, E = 4, H = 3, K = 2;
static std::vector<double> routing_map() {
    std::vector<double> m(T * E, 0);
    for (int t = 0; t < T; t++) {
        int a = t % E, b = (t * 2 + 1) % E;
        if (b == a) b = (b + 1) % E;
        m[t * E + a] = 1;
        m[t * E + b] = 1;
    }
    return m;
}

static void permute() {
    int f0 = g_fail;
    std::vector<double> rm = routing_map(), xv = values(T * H, ACL_FLOAT, 3), pv = values(T * E, ACL_FLOAT, 4);
    Dev x = make({T, H}, ACL_FLOAT, xv), m = make({T, E}, ACL_BOOL, rm), p = make({T, E}, ACL_FLOAT, pv);
    /* without drop-and-pad: expert-major pairs; sortedIndices[token-major pair] = its row */
    {
        int rows = T * K;
        Dev o = make({rows, H}, ACL_FLOAT, {7}), op = make({rows}, ACL_FLOAT, {7}), os = make({rows}, ACL_INT32, {7});
        RUN(S, aclnnMoeTokenPermuteWithRoutingMap, x.t, m.t, p.t, rows, false, o.t, op.t, os.t);
        std::vector<double> wo, wp, ws_(rows);
        std::vector<int> row_of(T * E, -1);
        for (int e = 0; e < E; e++)
            for (int t = 0; t < T; t++)
                if (rm[t * E + e] != 0) {
                    row_of[t * E + e] = static_cast<int>(wp.size());
                    wp.push_back(pv[t * E + e]);
                    for (int c = 0; c < H; c++) wo.push_back(xv[t * H + c]);
                }
        for (int t = 0, i = 0; t < T; t++)
            for (int e = 0; e < E; e++)
                if (rm[t * E + e] != 0) ws_[i++] = row_of[t * E + e];
        compare("Permute top-k permuted tokens", read(o), wo, 0);
        compare("Permute top-k permuted probs", read(op), wp, 0);
        compare("Permute top-k sortedIndices", read(os), ws_, 0);
    }
    /* drop-and-pad, capacity 2: per expert its routed tokens, then the others, in token order */
    {
        int cap = 2, rows = cap * E;
        Dev o = make({rows, H}, ACL_FLOAT, {7}), op = make({rows}, ACL_FLOAT, {7}), os = make({rows}, ACL_INT32, {7});
        RUN(S, aclnnMoeTokenPermuteWithRoutingMap, x.t, m.t, p.t, rows + 1, true, o.t, op.t, os.t);
        std::vector<double> wo, wp, ws_;
        for (int e = 0; e < E; e++) {
            std::vector<int> order;
            for (int t = 0; t < T; t++)
                if (rm[t * E + e] != 0) order.push_back(t);
            for (int t = 0; t < T; t++)
                if (rm[t * E + e] == 0) order.push_back(t);
            for (int j = 0; j < cap; j++) {
                int t = order[j];
                ws_.push_back(t);
                wp.push_back(pv[t * E + e]);
                for (int c = 0; c < H; c++) wo.push_back(xv[t * H + c]);
            }
        }
        compare("Permute drop-and-pad permuted tokens", read(o), wo, 0);
        compare("Permute drop-and-pad permuted probs", read(op), wp, 0);
        compare("Permute drop-and-pad sortedIndices", read(os), ws_, 0);
    }
    /* errors */
    int rows = T * K;
    Dev o = make({rows, H}, ACL_FLOAT, {0}), op = make({rows}, ACL_FLOAT, {0}), os = make({rows}, ACL_INT32, {0});
    Dev mf = make({T, E}, ACL_FLOAT, rm), m3 = make({1, T, E}, ACL_BOOL, rm), o9 = make({9, H}, ACL_FLOAT, {0});
    Dev os64 = make({rows}, ACL_INT64, {0}), p16 = make({T, E}, ACL_FLOAT16, pv);
    auto call = [&](aclTensor *xt, aclTensor *mt, aclTensor *pt, int64_t n, bool dp, aclTensor *ot, aclTensor *opt,
                    aclTensor *ost) {
        return aclnnMoeTokenPermuteWithRoutingMapGetWorkspaceSize(xt, mt, pt, n, dp, ot, opt, ost, &ws, &ex);
    };
    expect_code("Permute null tokens", call(nullptr, m.t, p.t, rows, false, o.t, op.t, os.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Permute probs without permuteProbsOutOptional", call(x.t, m.t, p.t, rows, false, o.t, nullptr, os.t),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Permute FLOAT routingMap", call(x.t, mf.t, p.t, rows, false, o.t, op.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Permute 3-D routingMap", call(x.t, m3.t, p.t, rows, false, o.t, op.t, os.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("Permute FLOAT16 probs for FLOAT tokens", call(x.t, m.t, p16.t, rows, false, o.t, op.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Permute numOutTokens 21 > 5 * 4", call(x.t, m.t, p.t, 21, false, o.t, op.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Permute numOutTokens -1", call(x.t, m.t, p.t, -1, false, o.t, op.t, os.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("Permute permuteTokensOut [9, 3] for 10 rows", call(x.t, m.t, p.t, rows, false, o9.t, op.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("Permute INT64 sortedIndicesOut", call(x.t, m.t, p.t, rows, false, o.t, op.t, os64.t),
                ACLNN_ERR_PARAM_INVALID);
    section("moe_token_permute_with_routing_map", f0);
}

static double dot(const std::vector<double> &a, const std::vector<double> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); i++) s += a[i] * b[i];
    return s;
}

/* The gradients, by the adjoint identity: permute is linear in tokens (and in probs), so
 * <g, permute(v)> = <permuteGrad(g), v> for any v; unpermute likewise in permutedTokens, and
 * its probs gradient is checked element by element against the host formula. */
static void gradients() {
    int f0 = g_fail;
    std::vector<double> rm = routing_map();
    Dev m = make({T, E}, ACL_INT8, rm);
    for (bool dp : {false, true}) {
        int rows = dp ? 2 * E : T * K;
        std::vector<double> xv = values(T * H, ACL_FLOAT, 11), pv = values(T * E, ACL_FLOAT, 12);
        std::vector<double> gv = values(rows * H, ACL_FLOAT, 13), gpv = values(rows, ACL_FLOAT, 14);
        Dev x = make({T, H}, ACL_FLOAT, xv), p = make({T, E}, ACL_FLOAT, pv);
        Dev o = make({rows, H}, ACL_FLOAT, {0}), op = make({rows}, ACL_FLOAT, {0}), os = make({rows}, ACL_INT32, {0});
        RUN(S, aclnnMoeTokenPermuteWithRoutingMap, x.t, m.t, p.t, rows, dp, o.t, op.t, os.t);
        Dev g = make({rows, H}, ACL_FLOAT, gv), gp = make({rows}, ACL_FLOAT, gpv);
        Dev tg = make({T, H}, ACL_FLOAT, {7}), pg = make({T, E}, ACL_FLOAT, {7});
        RUN(S, aclnnMoeTokenPermuteWithRoutingMapGrad, g.t, gp.t, os.t, m.t, E, T, dp, tg.t, pg.t);
        std::vector<double> lhs = {dot(gv, read(o)) + dot(gpv, read(op))};
        std::vector<double> rhs = {dot(read(tg), xv) + dot(read(pg), pv)};
        compare(dp ? "PermuteGrad adjoint (drop-and-pad)" : "PermuteGrad adjoint (top-k)", lhs, rhs, 1e-5);
        /* unpermute of what was permuted: with probs, each token sums its rows times probs */
        Dev u = make({T, H}, ACL_FLOAT, {7}), ui = make({rows}, ACL_INT32, {7}), ut = make({rows}, ACL_INT32, {7});
        Dev upp = make({rows}, ACL_FLOAT, {7});
        int64_t shape[2] = {T, H};
        aclIntArray *rs = aclCreateIntArray(shape, 2);
        RUN(S, aclnnMoeTokenUnpermuteWithRoutingMap, o.t, os.t, m.t, p.t, dp, rs, u.t, ui.t, ut.t, upp.t);
        std::vector<double> wu(T * H, 0), sv = read(os), ov = read(o);
        if (dp) {
            int cap = rows / E;
            for (int j = 0; j < rows; j++) {
                int t = static_cast<int>(sv[j]);
                for (int c = 0; c < H; c++) wu[t * H + c] += ov[j * H + c] * pv[t * E + j / cap];
            }
        } else {
            for (int t = 0, i = 0; t < T; t++)
                for (int e = 0; e < E; e++)
                    if (rm[t * E + e] != 0) {
                        int r = static_cast<int>(sv[i++]);
                        for (int c = 0; c < H; c++) wu[t * H + c] += ov[r * H + c] * pv[t * E + e];
                    }
        }
        compare(dp ? "Unpermute padded" : "Unpermute top-k", read(u), wu, 1e-5);
        /* its gradient: adjoint in permutedTokens, and d/dprobs[t, e] = <g[t], row of (t, e)> */
        std::vector<double> ugv = values(T * H, ACL_FLOAT, 15);
        Dev ug = make({T, H}, ACL_FLOAT, ugv), gx = make({rows, H}, ACL_FLOAT, {7}), gpr = make({T, E}, ACL_FLOAT, {7});
        if (dp) {
            RUN(S, aclnnMoeTokenUnpermuteWithRoutingMapGrad, ug.t, ui.t, ut.t, m.t, o.t, p.t, true, rs, gx.t, gpr.t);
        } else {
            RUN(S, aclnnMoeTokenUnpermuteWithRoutingMapGrad, ug.t, os.t, os.t, m.t, o.t, p.t, false, rs, gx.t, gpr.t);
        }
        std::vector<double> lhs2 = {dot(ugv, read(u))}, rhs2 = {dot(read(gx), ov)};
        compare(dp ? "UnpermuteGrad adjoint (padded)" : "UnpermuteGrad adjoint (top-k)", lhs2, rhs2, 1e-5);
        std::vector<double> wpg(T * E, 0);
        if (dp) {
            int cap = rows / E;
            for (int j = 0; j < rows; j++) {
                int t = static_cast<int>(sv[j]);
                double s = 0;
                for (int c = 0; c < H; c++) s += ugv[t * H + c] * ov[j * H + c];
                wpg[t * E + j / cap] = s;
            }
        } else {
            for (int t = 0, i = 0; t < T; t++)
                for (int e = 0; e < E; e++)
                    if (rm[t * E + e] != 0) {
                        int r = static_cast<int>(sv[i++]);
                        double s = 0;
                        for (int c = 0; c < H; c++) s += ugv[t * H + c] * ov[r * H + c];
                        wpg[t * E + e] = s;
                    }
        }
        compare(dp ? "UnpermuteGrad probs (padded)" : "UnpermuteGrad probs (top-k)", read(gpr), wpg, 1e-5);
        aclDestroyIntArray(rs);
    }
    /* errors */
    Dev g = make({T * K, H}, ACL_FLOAT, {0}), gp = make({T * K}, ACL_FLOAT, {0}), s = make({T * K}, ACL_INT32, {0});
    Dev tg = make({T, H}, ACL_FLOAT, {0}), pg = make({T, E}, ACL_FLOAT, {0}), s2 = make({T, K}, ACL_INT32, {0});
    expect_code("PermuteGrad numExperts 0",
                aclnnMoeTokenPermuteWithRoutingMapGradGetWorkspaceSize(g.t, gp.t, s.t, m.t, 0, T, false, tg.t, pg.t,
                                                                      &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("PermuteGrad probs gradient without routingMapOptional",
                aclnnMoeTokenPermuteWithRoutingMapGradGetWorkspaceSize(g.t, gp.t, s.t, nullptr, E, T, false, tg.t,
                                                                      pg.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    int64_t shape[2] = {T, H};
    aclIntArray *rs = aclCreateIntArray(shape, 2);
    Dev u = make({T, H}, ACL_FLOAT, {0});
    expect_code("Unpermute probs and restoreShape both null",
                aclnnMoeTokenUnpermuteWithRoutingMapGetWorkspaceSize(g.t, s.t, m.t, nullptr, false, nullptr, u.t, s.t,
                                                                    s.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("Unpermute 2-D sortedIndices",
                aclnnMoeTokenUnpermuteWithRoutingMapGetWorkspaceSize(g.t, s2.t, m.t, nullptr, false, rs, u.t, s.t,
                                                                    s.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(rs);
    section("moe_routing_map_gradients", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    coalesce_sparse();
    permute();
    gradients();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
