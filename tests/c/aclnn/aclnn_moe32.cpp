/* MoE routing, quantized and backward, against host references: aclnnMoeInitRoutingQuantV2
 * (MoeInitRoutingV2's routing with static INT8 quantization round(x*scale+offset), or dynamic
 * per-row quantization with no, shared [1,H] or per-expert [E,H] smooth scales; drop-less and
 * drop/pad), aclnnMoeInitRoutingV2Grad (each token sums its routed gradient rows; activeNum
 * and drop/pad rows skipped), aclnnMoeFinalizeRoutingV2Grad (gradients of the expanded rows
 * and the scales, with and without bias), aclnnGroupedMatmulSwigluQuant (V1, A8W8), and the
 * expert-parallel token permutation (MoeTokenPermute/UnpermuteWithEp and their gradients over
 * a range of sorted positions); each with argument errors. */
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include "ops_ref.h"
#include "aclnnop/aclnn_moe_init_routing_quant_v2.h"
#include "aclnnop/aclnn_moe_init_routing_v2_grad.h"
#include "aclnnop/aclnn_moe_finalize_routing_v2_grad.h"
#include "aclnnop/aclnn_grouped_matmul_swiglu_quant.h"
#include "aclnnop/aclnn_grouped_matmul_swiglu_quant_weight_nz.h"
#include "aclnnop/aclnn_moe_token_permute_with_ep.h"
#include "aclnnop/aclnn_moe_token_permute_with_ep_grad.h"
#include "aclnnop/aclnn_moe_token_unpermute_with_ep.h"
#include "aclnnop/aclnn_moe_token_unpermute_with_ep_grad.h"

static aclrtStream S;
static uint64_t ws = 0;
static aclOpExecutor *ex = nullptr;
static const int TILING = 561002;

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

/* MoeInitRoutingV2's routing (host): row index of each pair, and (dst, src, expert) gathers. */
struct Routing {
    std::vector<double> ri;
    std::vector<int> dst, src, expert;
    int rows;
    std::vector<double> cnt;
};
static Routing route(const std::vector<double> &ev, int n, int K, int E, int active, int cap, int mode) {
    int nk = n * K;
    Routing r;
    r.ri.assign(nk, -1);
    r.cnt.assign(E, 0);
    for (int j = 0; j < nk; j++)
        if (ev[j] >= 0 && ev[j] < E) r.cnt[static_cast<int>(ev[j])]++;
    std::vector<int> order(nk);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ev[a] < ev[b]; });
    if (mode == 1) {
        r.rows = E * cap;
        std::vector<int> fill(E, 0);
        for (int j : order) {
            int e = static_cast<int>(ev[j]);
            if (fill[e] >= cap) continue;
            int slot = e * cap + fill[e]++;
            r.ri[j] = slot;
            r.dst.push_back(slot), r.src.push_back(j / K), r.expert.push_back(e);
        }
    } else {
        r.rows = active > 0 ? std::min(nk, active) : nk;
        for (int i = 0; i < nk; i++) {
            r.ri[order[i]] = i;
            if (i < r.rows) r.dst.push_back(i), r.src.push_back(order[i] / K), r.expert.push_back(static_cast<int>(ev[order[i]]));
        }
    }
    return r;
}

static double rint_i8(float v) { return std::max(-128.0, std::min(127.0, static_cast<double>(std::nearbyint(v)))); }

/* f32 -> f16 toward zero */
static float f16_trunc(float v) {
    uint16_t h = f32_to_f16(v);
    if (std::fabs(f16_to_f32(h)) > std::fabs(v)) h = static_cast<uint16_t>(h - 1);
    return f16_to_f32(h);
}

static void quant_case(const char *what, aclDataType dt, int n, int H, int K, int E, int active, int cap, int mode,
                       int flag, bool beforeFlag, int quantMode, int smoothRows) {
    std::vector<double> xv = values(n * H, dt, 41), ev(n * K);
    for (int j = 0; j < n * K; j++) ev[j] = (j * 7 + j / 3) % E;
    Routing r = route(ev, n, K, E, active, cap, mode);
    int nk = n * K;
    float sc = 7.5f, off = 2.25f;
    std::vector<double> smv = values(std::max(1, smoothRows) * H, ACL_FLOAT, 43, false, true);
    Dev x = make({n, H}, dt, xv), e = make({n, K}, ACL_INT32, ev);
    Dev s1 = make({1}, ACL_FLOAT, {sc}), o1 = make({1}, ACL_FLOAT, {off});
    Dev sm = make({std::max(1, smoothRows), H}, ACL_FLOAT, smv);
    Dev ox = mode == 1 ? make({E, cap, H}, ACL_INT8, {7}) : make({r.rows, H}, ACL_INT8, {7});
    Dev ori = make({nk}, ACL_INT32, {7}), ot = make({E}, ACL_INT32, {7}), ob = make({E}, ACL_INT32, {7});
    Dev od = make({r.rows}, ACL_FLOAT, {7});
    aclTensor *scale = quantMode == 0 ? s1.t : (smoothRows > 0 ? sm.t : nullptr);
    aclTensor *offset = quantMode == 0 ? o1.t : nullptr;
    RUN(S, aclnnMoeInitRoutingQuantV2, x.t, e.t, scale, offset, active, cap, E, mode, flag, beforeFlag, quantMode,
        ox.t, ori.t, ot.t, ob.t, od.t);
    std::vector<double> wx(r.rows * H, 0), wd(r.rows, quantMode == 1 ? 0 : 7), wt(E, 7), wb(E, 7);
    for (size_t g = 0; g < r.dst.size(); g++) {
        int d = r.dst[g], s = r.src[g];
        if (quantMode == 0) {
            for (int c = 0; c < H; c++) {
                float xf = static_cast<float>(xv[s * H + c]);
                float y;
                if (dt == ACL_FLOAT) {
                    y = xf * sc + off;
                } else {
                    float h = f16_to_f32(f32_to_f16(f16_to_f32(f32_to_f16(xf)) * f16_to_f32(f32_to_f16(sc))));
                    y = f16_to_f32(f32_to_f16(h + f16_to_f32(f32_to_f16(off))));
                }
                wx[d * H + c] = rint_i8(y);
            }
        } else {
            int er = smoothRows > 1 ? r.expert[g] : 0;
            std::vector<float> v(H);
            float m = 0;
            for (int c = 0; c < H; c++) {
                v[c] = static_cast<float>(xv[s * H + c]) * (smoothRows > 0 ? static_cast<float>(smv[er * H + c]) : 1.0f);
                m = std::max(m, std::fabs(v[c]));
            }
            float q = m / 127.0f;
            wd[d] = q;
            for (int c = 0; c < H; c++)
                wx[d * H + c] = q > 0 ? std::max(-128.0, std::min(127.0, static_cast<double>(std::round(f16_trunc(v[c] / q))))) : 0;
        }
    }
    if (mode == 1) {
        if (beforeFlag) wb = r.cnt;
    } else {
        if (flag == 2) wt = r.cnt;
        if (flag == 1) {
            double s = 0;
            for (int i = 0; i < E; i++) wt[i] = s += r.cnt[i];
        }
    }
    std::string w(what);
    compare((w + " expandedXOut").c_str(), read(ox), wx, 0);
    compare((w + " expandedRowIdxOut").c_str(), read(ori), r.ri, 0);
    compare((w + " expertTokensCountOrCumsumOut").c_str(), read(ot), wt, 0);
    compare((w + " expertTokensBeforeCapacityOut").c_str(), read(ob), wb, 0);
    compare((w + " dynamicQuantScaleOut").c_str(), read(od), wd, 0);
}

static void moe_init_routing_quant_v2() {
    int f0 = g_fail;
    quant_case("QuantV2 static FLOAT [6,5] K3 E8 drop-less cumsum", ACL_FLOAT, 6, 5, 3, 8, 0, 0, 0, 1, false, 0, 0);
    quant_case("QuantV2 static FLOAT16 [5,8] K2 E4 activeNum 7 count", ACL_FLOAT16, 5, 8, 2, 4, 7, 0, 0, 2, false, 0, 0);
    quant_case("QuantV2 static BFLOAT16 drop/pad E4 C3", ACL_BF16, 8, 6, 2, 4, 0, 3, 1, 0, true, 0, 0);
    quant_case("QuantV2 dynamic FLOAT no smooth drop-less", ACL_FLOAT, 6, 16, 2, 5, 0, 0, 0, 1, false, 1, 0);
    quant_case("QuantV2 dynamic FLOAT16 smooth [1,H] activeNum 5", ACL_FLOAT16, 4, 12, 3, 6, 5, 0, 0, 2, false, 1, 1);
    quant_case("QuantV2 dynamic BFLOAT16 smooth [E,H] drop/pad C2", ACL_BF16, 6, 10, 2, 4, 0, 2, 1, 0, true, 1, 4);
    quant_case("QuantV2 dynamic FLOAT smooth [E,H] drop-less", ACL_FLOAT, 5, 7, 2, 3, 0, 0, 0, 0, false, 1, 3);
    /* documented errors */
    Dev x = make({3, 4}, ACL_FLOAT, values(12, ACL_FLOAT, 5)), e = make({3, 2}, ACL_INT32, {0, 1, 2, 3, 0, 1});
    Dev s = make({1}, ACL_FLOAT, {1}), o = make({1}, ACL_FLOAT, {0}), s2 = make({2}, ACL_FLOAT, {1, 1});
    Dev ox = make({6, 4}, ACL_INT8, {0}), oxf = make({6, 4}, ACL_FLOAT, {0}), ori = make({6}, ACL_INT32, {0});
    Dev ot = make({4}, ACL_INT32, {0}), od = make({6}, ACL_FLOAT, {0}), od5 = make({5}, ACL_FLOAT, {0});
    auto call = [&](aclTensor *xt, aclTensor *st, aclTensor *ot_, int64_t quant, aclTensor *xo, aclTensor *dq,
                    int64_t drop) {
        return aclnnMoeInitRoutingQuantV2GetWorkspaceSize(xt, e.t, st, ot_, 0, drop ? 1 : 0, 4, drop, 1, false, quant,
                                                          xo, ori.t, ot.t, nullptr, dq, &ws, &ex);
    };
    expect_code("QuantV2 null x", call(nullptr, s.t, o.t, 0, ox.t, nullptr, 0), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("QuantV2 FLOAT expandedXOut", call(x.t, s.t, o.t, 0, oxf.t, nullptr, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantV2 static without offset", call(x.t, s.t, nullptr, 0, ox.t, nullptr, 0), TILING);
    expect_code("QuantV2 static scale [2]", call(x.t, s2.t, o.t, 0, ox.t, nullptr, 0), TILING);
    expect_code("QuantV2 quantMode 2", call(x.t, s.t, o.t, 2, ox.t, nullptr, 0), TILING);
    expect_code("QuantV2 dynamic without dynamicQuantScaleOut", call(x.t, nullptr, nullptr, 1, ox.t, nullptr, 0), TILING);
    expect_code("QuantV2 dynamic scale out [5] for 6 rows", call(x.t, nullptr, nullptr, 1, ox.t, od5.t, 0), TILING);
    expect_code("QuantV2 dynamic 1-D smooth", call(x.t, s.t, nullptr, 1, ox.t, od.t, 0), TILING);
    section("moe_init_routing_quant_v2", f0);
}

static void v2_grad_case(const char *what, aclDataType dt, int n, int H, int K, int E, int active, int cap, int mode) {
    std::vector<double> ev(n * K);
    for (int j = 0; j < n * K; j++) ev[j] = (j * 5 + j / 4) % E;
    Routing r = route(ev, n, K, E, active, cap, mode);
    std::vector<double> gv = values(r.rows * H, dt, 51);
    Dev g = mode == 1 ? make({E, cap, H}, dt, gv) : make({r.rows, H}, dt, gv);
    Dev ri = make({n * K}, ACL_INT32, r.ri), out = make({n, H}, dt, {7});
    RUN(S, aclnnMoeInitRoutingV2Grad, g.t, ri.t, K, mode, active, out.t);
    std::vector<double> want(n * H, 0);
    for (int j = 0; j < n * K; j++) {
        int row = static_cast<int>(r.ri[j]);
        if (row < 0 || row >= r.rows) continue;
        for (int c = 0; c < H; c++) want[(j / K) * H + c] += gv[row * H + c];
    }
    for (auto &v : want) v = as_type(v, dt);
    compare(what, read(out), want, dt == ACL_FLOAT ? 1e-6 : 1e-2);
}

static void moe_init_routing_v2_grad() {
    int f0 = g_fail;
    v2_grad_case("V2Grad FLOAT drop-less [6,5] K3", ACL_FLOAT, 6, 5, 3, 8, 0, 0, 0);
    v2_grad_case("V2Grad FLOAT16 drop-less activeNum 7", ACL_FLOAT16, 5, 4, 2, 4, 7, 0, 0);
    v2_grad_case("V2Grad BFLOAT16 drop/pad E4 C3", ACL_BF16, 8, 3, 2, 4, 0, 3, 1);
    v2_grad_case("V2Grad FLOAT drop/pad E5 C2", ACL_FLOAT, 6, 9, 3, 5, 0, 2, 1);
    Dev g = make({6, 4}, ACL_FLOAT, {0}), g3 = make({2, 3, 4}, ACL_FLOAT, {0}), ri = make({6}, ACL_INT32, {0});
    Dev out = make({3, 4}, ACL_FLOAT, {0}), out16 = make({3, 4}, ACL_FLOAT16, {0}), out2 = make({2, 4}, ACL_FLOAT, {0});
    auto call = [&](aclTensor *gt, int64_t k, int64_t mode, int64_t active, aclTensor *o) {
        return aclnnMoeInitRoutingV2GradGetWorkspaceSize(gt, ri.t, k, mode, active, o, &ws, &ex);
    };
    expect_code("V2Grad null out", call(g.t, 2, 0, 0, nullptr), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("V2Grad FLOAT16 out for FLOAT grad", call(g.t, 2, 0, 0, out16.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("V2Grad topK 0", call(g.t, 0, 0, 0, out.t), TILING);
    expect_code("V2Grad drop/pad with 2-D grad", call(g.t, 2, 1, 0, out.t), TILING);
    expect_code("V2Grad activeNum 4 with 6 grad rows", call(g.t, 2, 0, 4, out.t), TILING);
    expect_code("V2Grad out [2,4] for 6/2 tokens", call(g.t, 2, 0, 0, out2.t), TILING);
    expect_code("V2Grad dropPadMode 2", call(g3.t, 2, 2, 0, out.t), TILING);
    section("moe_init_routing_v2_grad", f0);
}

static void fin_grad_case(const char *what, aclDataType dt, int R, int H, int K, int E, int active, int cap, int mode,
                          bool scales, bool bias) {
    std::vector<double> ev(R * K);
    for (int j = 0; j < R * K; j++) ev[j] = (j * 3 + j / 5) % E;
    Routing r = route(ev, R, K, E, active, cap, mode);
    std::vector<double> gy = values(R * H, dt, 61), xv = values(r.rows * H, dt, 62), sv = values(R * K, dt, 63);
    std::vector<double> bv = values(E * H, dt, 64);
    Dev g = make({R, H}, dt, gy), ri = make({R * K}, ACL_INT32, r.ri);
    Dev x = mode == 1 ? make({E, cap, H}, dt, xv) : make({r.rows, H}, dt, xv);
    Dev s = make({R, K}, dt, sv), e = make({R, K}, ACL_INT32, ev), b = make({E, H}, dt, bv);
    Dev gx = mode == 1 ? make({E, cap, H}, dt, {7}) : make({r.rows, H}, dt, {7});
    Dev gs = make({R, K}, dt, {7});
    RUN(S, aclnnMoeFinalizeRoutingV2Grad, g.t, ri.t, scales ? x.t : nullptr, scales ? s.t : nullptr,
        bias ? e.t : nullptr, bias ? b.t : nullptr, mode, active, E, cap, gx.t, scales ? gs.t : nullptr);
    std::vector<double> wgx(r.rows * H, 0), wgs(R * K, 0);
    for (int i = 0; i < R * K; i++) {
        int row = static_cast<int>(r.ri[i]);
        if (row < 0 || row >= r.rows) continue;
        double acc = 0;
        for (int c = 0; c < H; c++) {
            wgx[row * H + c] = gy[(i / K) * H + c] * (scales ? sv[i] : 1.0);
            acc += (xv[row * H + c] + (bias ? bv[static_cast<int>(ev[i]) * H + c] : 0)) * gy[(i / K) * H + c];
        }
        wgs[i] = acc;
    }
    for (auto &v : wgx) v = as_type(v, dt);
    for (auto &v : wgs) v = as_type(v, dt);
    double tol = dt == ACL_FLOAT ? 1e-6 : 1e-2;
    std::string w(what);
    compare((w + " gradExpandedXOut").c_str(), read(gx), wgx, tol);
    if (scales) compare((w + " gradScalesOut").c_str(), read(gs), wgs, tol);
}

static void moe_finalize_routing_v2_grad() {
    int f0 = g_fail;
    fin_grad_case("FinalizeV2Grad FLOAT no scales", ACL_FLOAT, 4, 6, 2, 4, 0, 0, 0, false, false);
    fin_grad_case("FinalizeV2Grad FLOAT scales", ACL_FLOAT, 5, 8, 3, 6, 0, 0, 0, true, false);
    fin_grad_case("FinalizeV2Grad FLOAT16 scales+bias activeNum 6", ACL_FLOAT16, 4, 5, 2, 3, 6, 0, 0, true, true);
    fin_grad_case("FinalizeV2Grad BFLOAT16 scales+bias drop/pad C2", ACL_BF16, 6, 4, 2, 4, 0, 2, 1, true, true);
    fin_grad_case("FinalizeV2Grad FLOAT scales drop/pad C3", ACL_FLOAT, 6, 7, 3, 5, 0, 3, 1, true, false);
    Dev g = make({2, 4}, ACL_FLOAT, {0}), ri = make({4}, ACL_INT32, {0, 1, 2, 3}), x = make({4, 4}, ACL_FLOAT, {0});
    Dev s = make({2, 2}, ACL_FLOAT, {1}), s16 = make({2, 2}, ACL_FLOAT16, {1}), b = make({2, 4}, ACL_FLOAT, {0});
    Dev gx = make({4, 4}, ACL_FLOAT, {0}), gs = make({2, 2}, ACL_FLOAT, {0}), gx3 = make({3, 4}, ACL_FLOAT, {0});
    auto call = [&](aclTensor *xt, aclTensor *st, aclTensor *et, aclTensor *bt, int64_t mode, aclTensor *gxo,
                    aclTensor *gso) {
        return aclnnMoeFinalizeRoutingV2GradGetWorkspaceSize(g.t, ri.t, xt, st, et, bt, mode, 0, 2, 2, gxo, gso, &ws, &ex);
    };
    expect_code("FinalizeV2Grad null gradExpandedXOut", call(x.t, s.t, nullptr, nullptr, 0, nullptr, gs.t),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("FinalizeV2Grad FLOAT16 scales", call(x.t, s16.t, nullptr, nullptr, 0, gx.t, gs.t), ACLNN_ERR_PARAM_INVALID);
    expect_code("FinalizeV2Grad scales without expandedX", call(nullptr, s.t, nullptr, nullptr, 0, gx.t, gs.t), TILING);
    expect_code("FinalizeV2Grad bias without expertIdx", call(x.t, s.t, nullptr, b.t, 0, gx.t, gs.t), TILING);
    expect_code("FinalizeV2Grad dropPadMode 3", call(x.t, s.t, nullptr, nullptr, 3, gx.t, gs.t), TILING);
    expect_code("FinalizeV2Grad gradExpandedX [3,4] for 4 rows", call(x.t, s.t, nullptr, nullptr, 0, gx3.t, gs.t), TILING);
    section("moe_finalize_routing_v2_grad", f0);
}

static void gmm_swiglu_quant_v1() {
    int f0 = g_fail;
    const int M = 10, K = 24, N = 16, E = 3;
    std::vector<double> xv = values(M * K, ACL_INT8, 71), wv = values(E * K * N, ACL_INT8, 72);
    std::vector<double> wsv = values(E * N, ACL_FLOAT, 73, false, true), xsv = values(M, ACL_FLOAT, 74, false, true);
    for (auto &v : wsv) v *= 0.01;
    for (auto &v : wsv) v = as_type(v, ACL_FLOAT);
    std::vector<double> gl = {3, 3, 8}; /* group 1 empty; rows 8, 9 past the last group */
    Dev x = make({M, K}, ACL_INT8, xv), w = make({E, K, N}, ACL_INT8, wv), wsc = make({E, N}, ACL_FLOAT, wsv);
    Dev xs = make({M}, ACL_FLOAT, xsv), g = make({E}, ACL_INT64, gl);
    Dev out = make({M, N / 2}, ACL_INT8, {7}), os = make({M}, ACL_FLOAT, {7}), oo = make({M}, ACL_FLOAT, {7});
    RUN(S, aclnnGroupedMatmulSwigluQuant, x.t, w.t, nullptr, nullptr, wsc.t, xs.t, g.t, out.t, os.t, oo.t);
    std::vector<double> q = read(out), sc = read(os);
    int bad = 0;
    for (int r = 0; r < M; r++) {
        int e = r < 3 ? 0 : r < 8 ? 2 : -1;
        if (e < 0) {
            for (int c = 0; c < N / 2; c++) bad += q[r * N / 2 + c] != 7;
            bad += sc[r] != 7;
            continue;
        }
        std::vector<double> c(N), s(N / 2);
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += xv[r * K + k] * wv[(e * K + k) * N + j];
            c[j] = acc * xsv[r] * wsv[e * N + j];
        }
        double m = 0;
        for (int j = 0; j < N / 2; j++) {
            double a = c[j];
            s[j] = c[j + N / 2] * a / (1 + std::exp(-a));
            m = std::max(m, std::fabs(s[j]));
        }
        double qs = m / 127;
        if (std::fabs(sc[r] - qs) > 1e-5 * (1 + qs)) bad++;
        for (int j = 0; j < N / 2; j++) bad += std::fabs(q[r * N / 2 + j] - std::nearbyint(s[j] / qs)) > 1;
    }
    g_checks++;
    if (bad) printf("FAIL GroupedMatmulSwigluQuant: %d elements off\n", bad), g_fail++;
    Dev b = make({E, N}, ACL_INT32, {0}), w3 = make({E, K, N - 1}, ACL_INT8, {0}), wsc3 = make({E, N - 1}, ACL_FLOAT, {0});
    uint64_t w_ = 0;
    aclOpExecutor *e_ = nullptr;
    expect_code("GroupedMatmulSwigluQuant null xScale",
                aclnnGroupedMatmulSwigluQuantGetWorkspaceSize(x.t, w.t, nullptr, nullptr, wsc.t, nullptr, g.t, out.t,
                                                              os.t, oo.t, &w_, &e_),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("GroupedMatmulSwigluQuant bias with INT8 weight",
                aclnnGroupedMatmulSwigluQuantGetWorkspaceSize(x.t, w.t, b.t, nullptr, wsc.t, xs.t, g.t, out.t, os.t,
                                                              oo.t, &w_, &e_),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupedMatmulSwigluQuant odd N",
                aclnnGroupedMatmulSwigluQuantGetWorkspaceSize(x.t, w3.t, nullptr, nullptr, wsc3.t, xs.t, g.t, out.t,
                                                              os.t, oo.t, &w_, &e_),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("GroupedMatmulSwigluQuantWeightNZ with an ND weight",
                aclnnGroupedMatmulSwigluQuantWeightNZGetWorkspaceSize(x.t, w.t, nullptr, nullptr, wsc.t, xs.t, g.t,
                                                                      out.t, os.t, oo.t, &w_, &e_),
                ACLNN_ERR_PARAM_INVALID);
    section("grouped_matmul_swiglu_quant", f0);
}

/* The four WithEp operators over one routing: T tokens, K slots, E experts, positions [r0, r1). */
static void with_ep_case(const char *what, aclDataType dt, int T, int H, int K, int E, int r0, int r1) {
    int nk = T * K, rows = r1 - r0;
    std::vector<double> ev(nk);
    for (int j = 0; j < nk; j++) ev[j] = (j * 5 + j / 3) % E;
    std::vector<int> order(nk);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ev[a] < ev[b]; });
    std::vector<double> inv(nk);
    for (int i = 0; i < nk; i++) inv[order[i]] = i;
    auto loc = [&](int j) { return inv[j] >= r0 && inv[j] < r1 ? static_cast<int>(inv[j]) - r0 : -1; };
    std::vector<double> tv = values(T * H, dt, 81), pv = values(nk, dt, 82);
    Dev tok = make({T, H}, dt, tv), idx = make({T, K}, ACL_INT32, ev), pr = make({T, K}, dt, pv);
    Dev po = make({rows, H}, dt, {7}), so = make({nk}, ACL_INT32, {7}), ppo = make({rows}, dt, {7});
    int64_t rg[2] = {r0, r1};
    aclIntArray *range = aclCreateIntArray(rg, 2);
    RUN(S, aclnnMoeTokenPermuteWithEp, tok.t, idx.t, pr.t, range, nk, false, po.t, so.t, ppo.t);
    std::vector<double> wpo(rows * H, 0), wppo(rows, 0);
    for (int j = 0; j < nk; j++) {
        int r = loc(j);
        if (r < 0) continue;
        for (int c = 0; c < H; c++) wpo[r * H + c] = tv[(j / K) * H + c];
        wppo[r] = pv[j];
    }
    std::string w(what);
    compare((w + " permuteTokensOut").c_str(), read(po), wpo, 0);
    compare((w + " sortedIndicesOut").c_str(), read(so), inv, 0);
    compare((w + " permuteProbsOut").c_str(), read(ppo), wppo, 0);
    double tol = dt == ACL_FLOAT ? 1e-6 : 1e-2;
    /* PermuteWithEpGrad */
    std::vector<double> gv = values(rows * H, dt, 83), gpv = values(rows, dt, 84);
    Dev g = make({rows, H}, dt, gv), gp = make({rows}, dt, gpv), tg = make({T, H}, dt, {7}), pg = make({T, K}, dt, {7});
    RUN(S, aclnnMoeTokenPermuteWithEpGrad, g.t, so.t, gp.t, K, range, false, tg.t, pg.t);
    std::vector<double> wtg(T * H, 0), wpg(nk, 0);
    for (int j = 0; j < nk; j++) {
        int r = loc(j);
        if (r < 0) continue;
        for (int c = 0; c < H; c++) wtg[(j / K) * H + c] += gv[r * H + c];
        wpg[j] = gpv[r];
    }
    for (auto &v : wtg) v = as_type(v, dt);
    compare((w + " PermuteWithEpGrad tokenGradOut").c_str(), read(tg), wtg, tol);
    compare((w + " PermuteWithEpGrad probsGradOut").c_str(), read(pg), wpg, 0);
    /* UnpermuteWithEp: out[t] = sum permuted[loc] * probs */
    Dev out = make({T, H}, dt, {7});
    RUN(S, aclnnMoeTokenUnpermuteWithEp, g.t, so.t, pr.t, K, range, false, nullptr, out.t);
    std::vector<double> wo(T * H, 0);
    for (int j = 0; j < nk; j++) {
        int r = loc(j);
        if (r < 0) continue;
        for (int c = 0; c < H; c++) wo[(j / K) * H + c] += gv[r * H + c] * pv[j];
    }
    for (auto &v : wo) v = as_type(v, dt);
    compare((w + " UnpermuteWithEp out").c_str(), read(out), wo, tol);
    /* UnpermuteWithEpGrad */
    std::vector<double> ugv = values(T * H, dt, 85);
    Dev ug = make({T, H}, dt, ugv), pgo = make({rows, H}, dt, {7}), prg = make({T, K}, dt, {7});
    RUN(S, aclnnMoeTokenUnpermuteWithEpGrad, ug.t, so.t, g.t, pr.t, false, nullptr, range, K, pgo.t, prg.t);
    std::vector<double> wpgo(rows * H, 0), wprg(nk, 0);
    for (int j = 0; j < nk; j++) {
        int r = loc(j);
        if (r < 0) continue;
        double acc = 0;
        for (int c = 0; c < H; c++) {
            wpgo[r * H + c] = ugv[(j / K) * H + c] * pv[j];
            acc += gv[r * H + c] * ugv[(j / K) * H + c];
        }
        wprg[j] = acc;
    }
    for (auto &v : wpgo) v = as_type(v, dt);
    for (auto &v : wprg) v = as_type(v, dt);
    compare((w + " UnpermuteWithEpGrad permutedTokensGradOut").c_str(), read(pgo), wpgo, tol);
    compare((w + " UnpermuteWithEpGrad probsGradOut").c_str(), read(prg), wprg, tol);
    aclDestroyIntArray(range);
}

static void moe_token_with_ep() {
    int f0 = g_fail;
    with_ep_case("WithEp FLOAT T5 K2 E4 range [2,8)", ACL_FLOAT, 5, 6, 2, 4, 2, 8);
    with_ep_case("WithEp BFLOAT16 T4 K3 E5 range [0,12)", ACL_BF16, 4, 8, 3, 5, 0, 12);
    with_ep_case("WithEp FLOAT16 T6 K2 E3 range [7,12)", ACL_FLOAT16, 6, 4, 2, 3, 7, 12);
    Dev tok = make({3, 4}, ACL_FLOAT, {1}), idx = make({3, 2}, ACL_INT32, {0, 1, 2, 0, 1, 2});
    Dev po = make({4, 4}, ACL_FLOAT, {0}), so = make({6}, ACL_INT32, {0});
    int64_t rg[2] = {1, 4};
    aclIntArray *bad = aclCreateIntArray(rg, 2);
    expect_code("PermuteWithEp null tokens",
                aclnnMoeTokenPermuteWithEpGetWorkspaceSize(nullptr, idx.t, nullptr, nullptr, 6, false, po.t, so.t,
                                                           nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("PermuteWithEp range [1,4) for 4 rows",
                aclnnMoeTokenPermuteWithEpGetWorkspaceSize(tok.t, idx.t, nullptr, bad, 6, false, po.t, so.t, nullptr,
                                                           &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("PermuteWithEp paddedMode",
                aclnnMoeTokenPermuteWithEpGetWorkspaceSize(tok.t, idx.t, nullptr, nullptr, 6, true, po.t, so.t,
                                                           nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("UnpermuteWithEp INT32 sortedIndices as out",
                aclnnMoeTokenUnpermuteWithEpGetWorkspaceSize(po.t, so.t, nullptr, 2, nullptr, false, nullptr, so.t,
                                                             &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    aclDestroyIntArray(bad);
    section("moe_token_with_ep", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    moe_init_routing_quant_v2();
    moe_init_routing_v2_grad();
    moe_finalize_routing_v2_grad();
    gmm_swiglu_quant_v1();
    moe_token_with_ep();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
