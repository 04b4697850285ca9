/* The MoE inference routing operators against float64 host references: aclnnMoeGatingTopK
 * (softmax or sigmoid, bias, groups ranked by their largest or two largest scores, the top k
 * experts of the best kGroup groups, yOut renormalised for sigmoid and scaled, the norm
 * output), aclnnMoeInitRoutingV3 (drop-less: stable sort by expert inside the active range,
 * both row-index types, count and key_value histograms, the gathered rows and 1-D scales, the
 * dynamic int8 quantisation with and without per-expert smoothing; the active mode (activeNum
 * rows), drop/pad mode ([E, C, H] blocks, dropped tokens -1), cumsum counts, no counts, static
 * int8 quantisation with scalar and per-expert scale/offset); plus the documented argument
 * errors (nullptr → 161001, data type → 161002, the tiling's shape and value rules → 561002). */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_moe_gating_top_k.h"
#include "aclnnop/aclnn_moe_init_routing_v3.h"

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

/* The host reference of one row set: y, expert indices and norm. */
static void gating_ref(const std::vector<double> &x, const std::vector<double> *bias, int rows, int E, int k,
                       int kGroup, int groupCount, int mode, int normType, double scale, double eps,
                       std::vector<double> &y, std::vector<double> &idx, std::vector<double> &norm) {
    int per = E / groupCount;
    auto desc = [](const std::vector<double> &v, std::vector<int> &ix) {
        std::stable_sort(ix.begin(), ix.end(), [&](int a, int b) { return v[a] > v[b]; });
    };
    for (int r = 0; r < rows; r++) {
        std::vector<double> n(E), s(E);
        if (normType == 1) {
            for (int i = 0; i < E; i++) n[i] = 1 / (1 + std::exp(-x[r * E + i]));
        } else {
            double m = -INFINITY, sum = 0;
            for (int i = 0; i < E; i++) m = std::max(m, x[r * E + i]);
            for (int i = 0; i < E; i++) sum += n[i] = std::exp(x[r * E + i] - m);
            for (auto &v : n) v /= sum;
        }
        for (int i = 0; i < E; i++) s[i] = n[i] + (bias ? (*bias)[i] : 0);
        std::vector<double> gs(groupCount);
        for (int g = 0; g < groupCount; g++) {
            std::vector<double> part(s.begin() + g * per, s.begin() + (g + 1) * per);
            std::sort(part.rbegin(), part.rend());
            gs[g] = mode == 1 ? part[0] + part[1] : part[0];
        }
        std::vector<int> groups(groupCount);
        std::iota(groups.begin(), groups.end(), 0);
        desc(gs, groups);
        std::vector<int> cand;
        for (int j = 0; j < kGroup; j++)
            for (int i = 0; i < per; i++) cand.push_back(groups[j] * per + i);
        std::sort(cand.begin(), cand.end());
        desc(s, cand);
        double sum = 0;
        for (int j = 0; j < k; j++) sum += n[cand[j]];
        for (int j = 0; j < k; j++) {
            double v = n[cand[j]];
            if (normType == 1) v /= sum + eps;
            y.push_back(v * scale);
            idx.push_back(cand[j]);
        }
        norm.insert(norm.end(), n.begin(), n.end());
    }
}

static void gating_case(const char *what, aclDataType dt, int rows, int E, int k, int kGroup, int groupCount,
                        int mode, int normType, bool withBias, double scale, double eps, double tol) {
    std::vector<double> xv = values(rows * E, dt, 11), bv = values(E, dt, 12);
    for (auto &b : bv) b = as_type(b / 8, dt);
    Dev x = make({rows, E}, dt, xv), b = make({E}, dt, bv);
    Dev y = make({rows, k}, dt, {0}), e = make({rows, k}, ACL_INT32, {0}), o = make({rows, E}, ACL_FLOAT, {0});
    RUN(S, aclnnMoeGatingTopK, x.t, withBias ? b.t : nullptr, k, kGroup, groupCount, mode, 0, normType, true, scale,
        eps, y.t, e.t, o.t);
    std::vector<double> wy, wi, wn;
    gating_ref(xv, withBias ? &bv : nullptr, rows, E, k, kGroup, groupCount, mode, normType, scale, eps, wy, wi, wn);
    if (dt != ACL_FLOAT)
        for (auto &v : wy) v = as_type(v, dt);
    std::string w(what);
    compare((w + " expertIdxOut").c_str(), read(e), wi, 0);
    compare((w + " yOut").c_str(), read(y), wy, tol);
    compare((w + " outOut").c_str(), read(o), wn, 1e-6);
}

static void moe_gating_top_k() {
    int f0 = g_fail;
    /* the page's example: sigmoid, bias, 8 groups of 32, best 4 by their top-2 sums, k 8 */
    gating_case("sigmoid+bias [3,256] k8 kGroup4 of 8, top-2 sum", ACL_FLOAT, 3, 256, 8, 4, 8, 1, 1, true, 1.0, 1.0,
                1e-6);
    gating_case("sigmoid+bias [5,64] k6 kGroup2 of 8, top-2 sum, scale 2.5", ACL_FLOAT, 5, 64, 6, 2, 8, 1, 1, true, 2.5,
                1e-20, 1e-6);
    gating_case("softmax [4,32] k3 kGroup2 of 4, group max", ACL_FLOAT, 4, 32, 3, 2, 4, 0, 0, false, 1.5, 0.1, 1e-6);
    gating_case("softmax+bias FLOAT16 [4,48] k5 kGroup3 of 6, top-2 sum", ACL_FLOAT16, 4, 48, 5, 3, 6, 1, 0, true, 1.0,
                0.0, 2e-3);
    gating_case("sigmoid BFLOAT16 [2,16] k4 no groups (groupCount 1)", ACL_BF16, 2, 16, 4, 1, 1, 0, 1, false, 1.0,
                1e-6, 1e-2);
    /* documented errors */
    Dev x = make({3, 64}, ACL_FLOAT, values(192, ACL_FLOAT, 3)), b = make({64}, ACL_FLOAT, {0});
    Dev y = make({3, 4}, ACL_FLOAT, {0}), e = make({3, 4}, ACL_INT32, {0}), o = make({3, 64}, ACL_FLOAT, {0});
    auto call = [&](aclTensor *xt, aclTensor *bt, int64_t k, int64_t kg, int64_t gc, int64_t mode, int64_t renorm,
                    int64_t nt, aclTensor *yt, aclTensor *et) {
        return aclnnMoeGatingTopKGetWorkspaceSize(xt, bt, k, kg, gc, mode, renorm, nt, true, 1.0, 1e-20, yt, et, o.t,
                                                  &ws, &ex);
    };
    expect_code("MoeGatingTopK null x", call(nullptr, b.t, 4, 2, 8, 1, 0, 1, y.t, e.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeGatingTopK null yOut", call(x.t, b.t, 4, 2, 8, 1, 0, 1, nullptr, e.t), ACLNN_ERR_PARAM_NULLPTR);
    Dev xi = make({3, 64}, ACL_INT32, {0}), e64 = make({3, 4}, ACL_INT64, {0}), y16 = make({3, 4}, ACL_FLOAT16, {0});
    expect_code("MoeGatingTopK INT32 x", call(xi.t, nullptr, 4, 2, 8, 1, 0, 1, y.t, e.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeGatingTopK INT64 expertIdxOut", call(x.t, b.t, 4, 2, 8, 1, 0, 1, y.t, e64.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeGatingTopK FLOAT16 yOut for FLOAT x", call(x.t, b.t, 4, 2, 8, 1, 0, 1, y16.t, e.t),
                ACLNN_ERR_PARAM_INVALID);
    const int TILING = 561002;
    Dev b32 = make({32}, ACL_FLOAT, {0}), x3 = make({1, 3, 64}, ACL_FLOAT, {0}), y5 = make({3, 5}, ACL_FLOAT, {0});
    expect_code("MoeGatingTopK bias [32] for 64 experts", call(x.t, b32.t, 4, 2, 8, 1, 0, 1, y.t, e.t), TILING);
    expect_code("MoeGatingTopK 3-D x", call(x3.t, b.t, 4, 2, 8, 1, 0, 1, y.t, e.t), TILING);
    expect_code("MoeGatingTopK k 17 > kGroup 2 * 8", call(x.t, b.t, 17, 2, 8, 1, 0, 1, y.t, e.t), TILING);
    expect_code("MoeGatingTopK kGroup 9 > groupCount 8", call(x.t, b.t, 4, 9, 8, 1, 0, 1, y.t, e.t), TILING);
    expect_code("MoeGatingTopK groupCount 6 does not divide 64", call(x.t, b.t, 4, 2, 6, 1, 0, 1, y.t, e.t), TILING);
    expect_code("MoeGatingTopK renorm 1", call(x.t, b.t, 4, 2, 8, 1, 1, 1, y.t, e.t), TILING);
    expect_code("MoeGatingTopK normType 2", call(x.t, b.t, 4, 2, 8, 1, 0, 2, y.t, e.t), TILING);
    expect_code("MoeGatingTopK yOut [3,5] for k 4", call(x.t, b.t, 4, 2, 8, 1, 0, 1, y5.t, e.t), TILING);
    section("moe_gating_top_k", f0);
}

/* Init routing V3: one case; outputs start as the sentinel 7 (untouched parts keep it). */
static void routing_case(const char *what, aclDataType dt, int n, int H, int K, int expertNum, int start, int end,
                         int quantMode, bool withScale, int rowIdxType, int tokType) {
    std::vector<double> xv = values(n * H, dt, 21), ev(n * K);
    for (int j = 0; j < n * K; j++) ev[j] = (j * 7 + j / 3) % expertNum;
    int range = end - start;
    std::vector<double> sv = quantMode == 1 ? values(range * H, ACL_FLOAT, 22, true, true) : values(n, ACL_FLOAT, 23);
    Dev x = make({n, H}, dt, xv), e = make({n, K}, ACL_INT32, ev);
    Dev sc = quantMode == 1 ? make({range, H}, ACL_FLOAT, sv) : make({n}, ACL_FLOAT, sv);
    aclDataType odt = quantMode == 1 ? ACL_INT8 : dt;
    Dev ox = make({n * K, H}, odt, {7}), ori = make({n * K}, ACL_INT32, {7}), os = make({n * K}, ACL_FLOAT, {7});
    Dev ot = tokType == 2 ? make({expertNum, 2}, ACL_INT64, {7}) : make({range}, ACL_INT64, {7});
    std::vector<int64_t> rg{start, end};
    aclIntArray *ra = aclCreateIntArray(rg.data(), 2);
    RUN(S, aclnnMoeInitRoutingV3, x.t, e.t, withScale ? sc.t : nullptr, nullptr, n * K, 0, expertNum, 0, tokType, true,
        quantMode, ra, rowIdxType, ox.t, ori.t, ot.t, os.t);
    /* host reference */
    std::vector<int> order;
    for (int j = 0; j < n * K; j++)
        if (ev[j] >= start && ev[j] < end) order.push_back(j);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ev[a] < ev[b]; });
    int avail = static_cast<int>(order.size());
    std::vector<double> wri(n * K, rowIdxType == 0 ? -1 : 7);
    for (int i = 0; i < avail; i++) {
        if (rowIdxType == 0) wri[order[i]] = i;
        else wri[i] = order[i];
    }
    std::vector<double> cnt(range, 0), wt;
    for (int j : order) cnt[ev[j] - start]++;
    if (tokType == 2) {
        wt.assign(expertNum * 2, 7);
        int s = 0;
        for (int i = 0; i < range; i++)
            if (cnt[i] != 0) {
                wt[2 * s] = i + start;
                wt[2 * s + 1] = cnt[i];
                s++;
            }
        if (s < expertNum) wt[2 * s] = wt[2 * s + 1] = 0;
    } else {
        wt = cnt;
    }
    std::vector<double> wx(n * K * H, 7), ws_(n * K, 7);
    for (int i = 0; i < avail; i++) {
        int src = order[i] / K;
        if (quantMode == 1) {
            std::vector<double> v(H);
            double m = 0;
            for (int c = 0; c < H; c++) {
                v[c] = xv[src * H + c] * (withScale ? sv[(ev[order[i]] - start) * H + c] : 1.0);
                m = std::max(m, std::fabs(v[c]));
            }
            ws_[i] = m / 127;
            for (int c = 0; c < H; c++) wx[i * H + c] = std::round(v[c] / (m / 127));
        } else {
            for (int c = 0; c < H; c++) wx[i * H + c] = xv[src * H + c];
            if (withScale) ws_[i] = sv[src];
        }
    }
    std::string w(what);
    compare((w + " expandedRowIdxOut").c_str(), read(ori), wri, 0);
    compare((w + " expertTokensCountOrCumsumOut").c_str(), read(ot), wt, 0);
    if (quantMode == 1) {
        /* the kernel's half-precision step may move a value by one */
        std::vector<double> got = read(ox);
        g_checks++;
        for (size_t i = 0; i < wx.size(); i++)
            if (std::fabs(got[i] - wx[i]) > 1) {
                printf("FAIL %s expandedXOut: element %zu is %g, expected %g\n", what, i, got[i], wx[i]);
                g_fail++;
                break;
            }
        compare((w + " expandedScaleOut").c_str(), read(os), ws_, 1e-6);
    } else {
        compare((w + " expandedXOut").c_str(), read(ox), wx, 0);
        compare((w + " expandedScaleOut").c_str(), read(os), ws_, 0);
    }
    aclDestroyIntArray(ra);
}

/* Init routing V3, the other modes: active (activeNum rows) or drop/pad (capacity cap > 0),
 * tokens counted as tokType (-1: not asked for), no quantisation (-1) or static (0: scale and
 * offset one value when scalarQ, else one per active expert). Outputs start as 7. */
static void routing_case2(const char *what, aclDataType dt, int n, int H, int K, int expertNum, int start, int end,
                          int active, int cap, int tokType, int quantMode, bool scalarQ) {
    std::vector<double> xv = values(n * H, dt, 31), ev(n * K);
    for (int j = 0; j < n * K; j++) ev[j] = (j * 5 + j / 4) % expertNum;
    int range = end - start, nk = n * K;
    int rows = cap > 0 ? expertNum * cap : (active == 0 ? nk : std::min(nk, active));
    std::vector<double> sv = scalarQ ? std::vector<double>{0.75} : values(range, ACL_FLOAT, 32, true, true);
    std::vector<double> ov = scalarQ ? std::vector<double>{2.0} : values(range, ACL_FLOAT, 33);
    for (auto &v : sv) v = as_type(v * 4, ACL_FLOAT);
    Dev x = make({n, H}, dt, xv), e = make({n, K}, ACL_INT32, ev);
    Dev sc = make({scalarQ ? 1 : range}, ACL_FLOAT, sv), of = make({scalarQ ? 1 : range}, ACL_FLOAT, ov);
    aclDataType odt = quantMode == 0 ? ACL_INT8 : dt;
    Dev ox = cap > 0 ? make({expertNum, cap, H}, odt, {7}) : make({rows, H}, odt, {7});
    Dev ori = make({nk}, ACL_INT32, {7}), os = make({nk}, ACL_FLOAT, {7});
    Dev ot = tokType == 2 ? make({expertNum, 2}, ACL_INT64, {7}) : make({range}, ACL_INT64, {7});
    std::vector<int64_t> rg{start, end};
    aclIntArray *ra = aclCreateIntArray(rg.data(), 2);
    RUN(S, aclnnMoeInitRoutingV3, x.t, e.t, quantMode == 0 ? sc.t : nullptr, quantMode == 0 ? of.t : nullptr, active,
        cap, expertNum, cap > 0 ? 1 : 0, tokType < 0 ? 1 : tokType, tokType >= 0, quantMode, ra, 0, ox.t, ori.t, ot.t,
        os.t);
    std::vector<int> order;
    for (int j = 0; j < nk; j++)
        if (ev[j] >= start && ev[j] < end) order.push_back(j);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ev[a] < ev[b]; });
    std::vector<double> wri(nk, -1), cnt(range, 0), wx(rows * H, cap > 0 ? 0 : 7), wt(numel(ot.shape), 7);
    std::vector<int> fill(range, 0);
    for (size_t i = 0; i < order.size(); i++) {
        int j = order[i], ex_ = static_cast<int>(ev[j]) - start, r = -1;
        cnt[ex_]++;
        if (cap > 0) {
            if (fill[ex_] < cap) r = ex_ * cap + fill[ex_];
            fill[ex_]++;
            wri[j] = r;
        } else {
            wri[j] = static_cast<double>(i);
            if (static_cast<int>(i) < rows) r = static_cast<int>(i);
        }
        if (r < 0) continue;
        for (int c = 0; c < H; c++) {
            double v = xv[(j / K) * H + c];
            if (quantMode == 0) {
                double q = v * sv[scalarQ ? 0 : ex_] + ov[scalarQ ? 0 : ex_];
                v = std::max(-128.0, std::min(127.0, static_cast<double>(std::nearbyint(static_cast<float>(q)))));
            }
            wx[r * H + c] = v;
        }
    }
    if (tokType == 0 || tokType == 1) {
        double acc = 0;
        for (int i = 0; i < range; i++) wt[i] = tokType == 1 ? cnt[i] : (acc += cnt[i]);
    } else if (tokType == 2) {
        int s2 = 0;
        for (int i = 0; i < range; i++)
            if (cnt[i] != 0) wt[2 * s2] = i + start, wt[2 * s2 + 1] = cnt[i], s2++;
        if (s2 < expertNum) wt[2 * s2] = wt[2 * s2 + 1] = 0;
    }
    std::string w(what);
    compare((w + " expandedRowIdxOut").c_str(), read(ori), wri, 0);
    compare((w + " expertTokensCountOrCumsumOut").c_str(), read(ot), wt, 0);
    compare((w + " expandedXOut").c_str(), read(ox), wx, 0);
    compare((w + " expandedScaleOut untouched").c_str(), read(os), std::vector<double>(nk, 7), 0);
    aclDestroyIntArray(ra);
}

static void moe_init_routing_v3() {
    int f0 = g_fail;
    routing_case("no quant, 1-D scale, gather index, count [6,5] K3 experts [2,7) of 8", ACL_FLOAT, 6, 5, 3, 8, 2, 7,
                 -1, true, 0, 1);
    routing_case("no quant FLOAT16, scatter index, key_value [5,4] K2 experts [1,6) of 8", ACL_FLOAT16, 5, 4, 2, 8, 1,
                 6, -1, false, 1, 2);
    routing_case("dynamic quant, per-expert smooth, scatter index, key_value [4,16] K3 experts [0,8)", ACL_FLOAT, 4,
                 16, 3, 8, 0, 8, 1, true, 1, 2);
    routing_case("dynamic quant BFLOAT16, no smooth, gather index, count [3,32] K4 experts [3,6) of 8", ACL_BF16, 3, 32,
                 4, 8, 3, 6, 1, false, 0, 1);
    routing_case2("active 7 of 18 rows, cumsum, experts [1,5) of 6 [6,5] K3", ACL_FLOAT, 6, 5, 3, 6, 1, 5, 7, 0, 0, -1,
                  false);
    routing_case2("activeNum 0 (all), no counts, FLOAT16 [5,4] K2 experts [0,4)", ACL_FLOAT16, 5, 4, 2, 4, 0, 4, 0, 0,
                  -1, -1, false);
    routing_case2("drop/pad capacity 2, count, BFLOAT16 [8,3] K2 E4", ACL_BF16, 8, 3, 2, 4, 0, 4, 0, 2, 1, -1, false);
    routing_case2("drop/pad capacity 5 (none dropped), no counts [6,4] K2 E3", ACL_FLOAT, 6, 4, 2, 3, 0, 3, 0, 5, -1,
                  -1, false);
    routing_case2("static quant, one scale and offset, count [4,8] K2 experts [0,4)", ACL_FLOAT16, 4, 8, 2, 4, 0, 4, 8,
                  0, 1, 0, true);
    routing_case2("static quant, per-expert scale and offset, active 5, experts [2,6) of 8 [5,6] K2", ACL_FLOAT, 5, 6,
                  2, 8, 2, 6, 5, 0, 0, 0, false);
    /* documented errors */
    Dev x = make({3, 4}, ACL_FLOAT, values(12, ACL_FLOAT, 5)), e = make({3, 2}, ACL_INT32, {0, 1, 2, 3});
    Dev ox = make({6, 4}, ACL_FLOAT, {0}), ori = make({6}, ACL_INT32, {0}), ot = make({4}, ACL_INT64, {0});
    Dev os = make({6}, ACL_FLOAT, {0}), e64 = make({3, 2}, ACL_INT64, {0}), ori5 = make({5}, ACL_INT32, {0});
    Dev ox8 = make({6, 4}, ACL_INT8, {0});
    std::vector<int64_t> rg{0, 4}, rgBad{2, 9};
    aclIntArray *ra = aclCreateIntArray(rg.data(), 2), *rb = aclCreateIntArray(rgBad.data(), 2);
    auto call = [&](aclTensor *et, int64_t active, int64_t drop, int64_t tokType, int64_t qm, aclIntArray *r,
                    aclTensor *xo, aclTensor *rio, aclTensor *so) {
        return aclnnMoeInitRoutingV3GetWorkspaceSize(x.t, et, nullptr, nullptr, active, 0, 8, drop, tokType, true, qm, r,
                                                     0, xo, rio, ot.t, so, &ws, &ex);
    };
    expect_code("MoeInitRoutingV3 null expandedScaleOut", call(e.t, 6, 0, 1, -1, ra, ox.t, ori.t, nullptr),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeInitRoutingV3 null expertIdx", call(nullptr, 6, 0, 1, -1, ra, ox.t, ori.t, os.t),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeInitRoutingV3 INT64 expertIdx", call(e64.t, 6, 0, 1, -1, ra, ox.t, ori.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRoutingV3 FLOAT expandedXOut with quantMode 1", call(e.t, 6, 0, 1, 1, ra, ox.t, ori.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRoutingV3 expandedRowIdxOut [5] for 6 rows", call(e.t, 6, 0, 1, -1, ra, ox.t, ori5.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    const int TILING = 561002;
    expect_code("MoeInitRoutingV3 activeNum -1", call(e.t, -1, 0, 1, -1, ra, ox.t, ori.t, os.t), TILING);
    expect_code("MoeInitRoutingV3 activeNum 5 with expandedXOut [6,4]", call(e.t, 5, 0, 1, -1, ra, ox.t, ori.t, os.t),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("MoeInitRoutingV3 dropPadMode 1 with expertCapacity 0", call(e.t, 6, 1, 1, -1, ra, ox.t, ori.t, os.t),
                TILING);
    expect_code("MoeInitRoutingV3 dropPadMode 2", call(e.t, 6, 2, 1, -1, ra, ox.t, ori.t, os.t), TILING);
    expect_code("MoeInitRoutingV3 expertTokensNumType 3", call(e.t, 6, 0, 3, -1, ra, ox.t, ori.t, os.t), TILING);
    expect_code("MoeInitRoutingV3 quantMode 0 (static) without scaleOptional",
                call(e.t, 6, 0, 1, 0, ra, ox8.t, ori.t, os.t), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("MoeInitRoutingV3 quantMode 2 (MXFP8, Ascend 950 only)", call(e.t, 6, 0, 1, 2, ra, ox.t, ori.t, os.t),
                TILING);
    {
        Dev oxd = make({8, 2, 4}, ACL_FLOAT, {0});
        expect_code("MoeInitRoutingV3 drop/pad with activeExpertRange [0,4] of 8 experts",
                    aclnnMoeInitRoutingV3GetWorkspaceSize(x.t, e.t, nullptr, nullptr, 0, 2, 8, 1, 1, true, -1, ra, 0,
                                                          oxd.t, ori.t, ot.t, os.t, &ws, &ex),
                    TILING);
        release(oxd);
    }
    expect_code("MoeInitRoutingV3 range [2,9] past expertNum 8", call(e.t, 6, 0, 1, -1, rb, ox.t, ori.t, os.t), TILING);
    aclDestroyIntArray(ra);
    aclDestroyIntArray(rb);
    section("moe_init_routing_v3", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    moe_gating_top_k();
    moe_init_routing_v3();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
