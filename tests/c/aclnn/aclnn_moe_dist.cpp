/* aclnnMoeDistributeDispatch / aclnnMoeDistributeCombine as a real multi-process job: run
 * as N ranks by `npu-emu run -n N` (RANK_ID, RANK_SIZE, ASCEND_DEVICE_ID, RANK_TABLE_FILE);
 * each rank builds the communicator from the rank table and passes its name as groupEp.
 * Every rank generates every rank's tokens and routing from seeds, so it computes the
 * documented outputs on the host:
 * - Dispatch: expandX rows grouped by local expert, then source rank, then the row-major
 *   order of the source's expertIds; expandIdx, expertTokenNums (counts and running sums),
 *   epRecvCounts (expert-major running sum), expandScales, zero rows past the received ones;
 *   FLOAT16 and BFLOAT16, equal and unequal BS per rank (globalBs = maxBs * N);
 * - quantMode 2 (dynamic per-token int8, with and without smooth scales): expandX int8 and
 *   dynamicScales against the same float32 formula;
 * - Combine after an identity expert: x[t] = sum_k expertScales[t][k] * x[t]; after an
 *   expert that adds its expert id: sum_k s_k * (x[t] + e_k), accumulated in float32;
 * - DispatchV2 / CombineV2: xActiveMask (the inactive tokens are not sent and combine to
 *   sharedExpertX alone), assistInfoForCombine, commAlg "hierarchy", sharedExpertX added;
 * - CombineAddRmsNorm after DispatchV2: xOut = round(combine) + residualX,
 *   yOut = xOut / sqrt(mean(xOut^2) + normEps) * gamma, rstdOut;
 * - the documented argument errors and their codes.
 * Prints "aclnn_moe_dist rank R/N passed (C checks)". */
#include <unistd.h>
#include <algorithm>
#include "ops_ref.h"
#include "hccl/hccl.h"
#include "aclnnop/aclnn_moe_distribute_dispatch.h"
#include "aclnnop/aclnn_moe_distribute_combine.h"
#include "aclnnop/aclnn_moe_distribute_dispatch_v2.h"
#include "aclnnop/aclnn_moe_distribute_combine_v2.h"
#include "aclnnop/aclnn_moe_distribute_combine_add_rms_norm.h"

static aclrtStream S;
static int R = 0, N = 1;
static char G[128];

#define HOK(call)                                                                          \
    do {                                                                                   \
        HcclResult h_ = (call);                                                            \
        if (h_ != HCCL_SUCCESS) {                                                          \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,  \
                    (int)h_, test_msg());                                                  \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static void expect(const char *what, int got, int want, const char *sub) {
    g_checks++;
    const char *m = test_msg();
    if (got != want || (sub && !strstr(m, sub))) {
        printf("FAIL %s: returned %d, expected %d; message \"%s\" (wants \"%s\")\n", what, got, want, m,
               sub ? sub : "");
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, m);
    }
}

/* One rank's tokens: x [bs, h], expertIds [bs, k] (distinct experts per token), scales. */
struct Tokens {
    int64_t bs;
    std::vector<double> x, scales;
    std::vector<int> ids;
};

static Tokens tokens_of(int r, int64_t bs, int64_t h, int64_t k, int64_t experts, aclDataType dt, unsigned id) {
    Tokens t;
    t.bs = bs;
    t.x = values(bs * h, dt, id * 131u + static_cast<unsigned>(r) * 7919u);
    t.scales = values(bs * k, ACL_FLOAT, id * 17u + static_cast<unsigned>(r) * 31u + 5u, true, true);
    for (auto &s : t.scales) s = static_cast<float>(s / 8);
    uint32_t x = 88172645u ^ (id * 2654435761u) ^ (static_cast<uint32_t>(r) * 40503u);
    for (int64_t i = 0; i < bs; i++) {
        std::vector<int> row;
        while (static_cast<int64_t>(row.size()) < k) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            int e = static_cast<int>(x % static_cast<uint32_t>(experts));
            if (std::find(row.begin(), row.end(), e) == row.end()) row.push_back(e);
        }
        t.ids.insert(t.ids.end(), row.begin(), row.end());
    }
    return t;
}

struct Case {
    const char *name;
    aclDataType dt;
    int64_t h, k, local;
    bool equal_bs;
    int64_t token_nums_type;
    bool with_scales;
    unsigned id;
};

/* What this rank receives: rows (source rank, token, k entry), expert-major. */
struct Row {
    int src;
    int64_t tok, j;
    int e;
};

static std::vector<Row> received(const std::vector<Tokens> &all, int64_t k, int64_t local) {
    std::vector<Row> rows;
    for (int64_t le = 0; le < local; le++) {
        int e = static_cast<int>(R * local + le);
        for (int s = 0; s < N; s++)
            for (size_t i = 0; i < all[s].ids.size(); i++)
                if (all[s].ids[i] == e)
                    rows.push_back({s, static_cast<int64_t>(i) / k, static_cast<int64_t>(i) % k, e});
    }
    return rows;
}

static void test_case(const Case &c) {
    const int64_t h = c.h, k = c.k, local = c.local, experts = local * N;
    std::vector<Tokens> all;
    int64_t max_bs = 0;
    for (int r = 0; r < N; r++) {
        int64_t bs = c.equal_bs ? 6 : 3 + r;
        max_bs = std::max(max_bs, bs);
        all.push_back(tokens_of(r, bs, h, k, experts, c.dt, c.id));
    }
    const Tokens &me = all[static_cast<size_t>(R)];
    int64_t bs = me.bs;
    int64_t global_bs = c.equal_bs ? 0 : max_bs * N;
    int64_t a = max_bs * N * std::min(local, k);
    std::vector<double> ids_d(me.ids.begin(), me.ids.end());
    Dev x = make({bs, h}, c.dt, me.x);
    Dev ids = make({bs, k}, ACL_INT32, ids_d);
    Dev es = make({bs, k}, ACL_FLOAT, me.scales);
    Dev ex = make({a, h}, c.dt, {7});
    Dev dyn = make({a}, ACL_FLOAT, {});
    Dev eidx = make({bs * k}, ACL_INT32, {});
    Dev nums = make({local}, ACL_INT64, {});
    Dev eprc = make({local * N + 4}, ACL_INT32, {9});
    Dev tprc = make({0}, ACL_INT32, {});
    Dev escl = make({a}, ACL_FLOAT, {3});
    RUN(S, aclnnMoeDistributeDispatch, x.t, ids.t, nullptr, nullptr, c.with_scales ? es.t : nullptr, G, N, R, experts,
        "", 0, 0, 0, 1, 0, 0, global_bs, c.token_nums_type, ex.t, dyn.t, eidx.t, nums.t, eprc.t, tprc.t,
        c.with_scales ? escl.t : nullptr);

    std::vector<Row> rows = received(all, k, local);
    std::string w = std::string("dispatch ") + c.name;
    /* expandX */
    std::vector<double> want_x(static_cast<size_t>(a * h), 0);
    for (size_t i = 0; i < rows.size(); i++)
        for (int64_t q = 0; q < h; q++)
            want_x[i * h + q] = all[rows[i].src].x[static_cast<size_t>(rows[i].tok * h + q)];
    compare((w + " expandX").c_str(), read(ex), want_x, 0);
    /* expandIdx */
    std::vector<double> want_idx;
    std::vector<int> seen(static_cast<size_t>(experts), 0);
    for (int e : me.ids) want_idx.push_back(seen[static_cast<size_t>(e)]++);
    compare((w + " expandIdx").c_str(), read(eidx), want_idx, 0);
    /* epRecvCounts, expertTokenNums */
    std::vector<double> want_ep(static_cast<size_t>(local * N + 4), 0), want_nums(static_cast<size_t>(local), 0);
    double run = 0;
    for (int64_t le = 0; le < local; le++)
        for (int s = 0; s < N; s++) {
            int64_t cnt = 0;
            for (const Row &rw : rows) cnt += rw.e == R * local + le && rw.src == s;
            run += static_cast<double>(cnt);
            want_ep[static_cast<size_t>(le * N + s)] = run;
            want_nums[static_cast<size_t>(le)] += static_cast<double>(cnt);
        }
    if (c.token_nums_type == 0)
        for (int64_t le = 1; le < local; le++) want_nums[le] += want_nums[le - 1];
    compare((w + " epRecvCounts").c_str(), read(eprc), want_ep, 0);
    compare((w + " expertTokenNums").c_str(), read(nums), want_nums, 0);
    if (c.with_scales) {
        std::vector<double> want_s(static_cast<size_t>(a), 0);
        for (size_t i = 0; i < rows.size(); i++)
            want_s[i] = all[rows[i].src].scales[static_cast<size_t>(rows[i].tok * k + rows[i].j)];
        compare((w + " expandScales").c_str(), read(escl), want_s, 0);
    }

    /* Combine after the identity expert, then after the expert f_e(x) = x + e. */
    for (int expert_fn = 0; expert_fn < 2; expert_fn++) {
        Dev y = make({a, h}, c.dt, {});
        if (expert_fn == 0) {
            std::vector<double> got = read(ex);
            release(y);
            y = make({a, h}, c.dt, got);
        } else {
            std::vector<double> v(static_cast<size_t>(a * h), 0);
            for (size_t i = 0; i < rows.size(); i++)
                for (int64_t q = 0; q < h; q++) v[i * h + q] = as_type(want_x[i * h + q] + rows[i].e, c.dt);
            release(y);
            y = make({a, h}, c.dt, v);
        }
        Dev out = make({bs, h}, c.dt, {});
        RUN(S, aclnnMoeDistributeCombine, y.t, ids.t, eidx.t, eprc.t, es.t, nullptr, nullptr, nullptr, nullptr, nullptr,
            c.with_scales ? escl.t : nullptr, G, N, R, experts, "", 0, 0, 0, 1, 0, global_bs, 0, 0, 0, out.t);
        std::vector<double> want(static_cast<size_t>(bs * h));
        for (int64_t t = 0; t < bs; t++)
            for (int64_t q = 0; q < h; q++) {
                float acc = 0;
                for (int64_t j = 0; j < k; j++) {
                    double xv = me.x[static_cast<size_t>(t * h + q)];
                    if (expert_fn) xv = as_type(xv + me.ids[static_cast<size_t>(t * k + j)], c.dt);
                    acc += static_cast<float>(me.scales[static_cast<size_t>(t * k + j)]) * static_cast<float>(xv);
                }
                want[static_cast<size_t>(t * h + q)] = as_type(acc, c.dt);
            }
        std::string cw = std::string("combine ") + c.name + (expert_fn ? " expert x+e" : " identity");
        compare(cw.c_str(), read(out), want, 0);
        release(y);
        release(out);
    }
    for (Dev *d : {&x, &ids, &es, &ex, &dyn, &eidx, &nums, &eprc, &tprc, &escl}) release(*d);
    printf("ok %s\n", c.name);
}

/* quantMode 2: expandX int8 and dynamicScales (with and without smooth scales). */
static void test_quant(bool smooth) {
    const int64_t h = 64, k = 2, local = 2, experts = local * N, bs = 5;
    const aclDataType dt = ACL_BF16;
    std::vector<Tokens> all;
    for (int r = 0; r < N; r++) all.push_back(tokens_of(r, bs, h, k, experts, dt, smooth ? 71 : 72));
    const Tokens &me = all[static_cast<size_t>(R)];
    int64_t a = bs * N * std::min(local, k);
    std::vector<double> sm = values(experts * h, ACL_FLOAT, 99, true, true);
    std::vector<double> ids_d(me.ids.begin(), me.ids.end());
    Dev x = make({bs, h}, dt, me.x);
    Dev ids = make({bs, k}, ACL_INT32, ids_d);
    Dev sc = make({experts, h}, ACL_FLOAT, sm);
    Dev ex = make({a, h}, ACL_INT8, {});
    Dev dyn = make({a}, ACL_FLOAT, {});
    Dev eidx = make({bs * k}, ACL_INT32, {});
    Dev nums = make({local}, ACL_INT64, {});
    Dev eprc = make({local * N}, ACL_INT32, {});
    RUN(S, aclnnMoeDistributeDispatch, x.t, ids.t, smooth ? sc.t : nullptr, nullptr, nullptr, G, N, R, experts, "", 0,
        0, 0, 1, 0, 2, 0, 1, ex.t, dyn.t, eidx.t, nums.t, eprc.t, nullptr, nullptr);
    std::vector<Row> rows = received(all, k, local);
    std::vector<double> want_q(static_cast<size_t>(a * h), 0), want_s(static_cast<size_t>(a), 0);
    for (size_t i = 0; i < rows.size(); i++) {
        std::vector<float> v(static_cast<size_t>(h));
        float amax = 0;
        for (int64_t q = 0; q < h; q++) {
            v[q] = static_cast<float>(all[rows[i].src].x[static_cast<size_t>(rows[i].tok * h + q)]);
            if (smooth) v[q] *= static_cast<float>(sm[static_cast<size_t>(rows[i].e * h + q)]);
            amax = std::max(amax, std::fabs(v[q]));
        }
        float s = amax / 127.0f;
        want_s[i] = s;
        for (int64_t q = 0; q < h; q++)
            want_q[i * h + q] = s > 0 ? std::min(127.0f, std::max(-128.0f, std::nearbyint(v[q] / s))) : 0;
    }
    std::string w = std::string("dispatch quantMode 2") + (smooth ? " smooth" : "");
    compare((w + " expandX").c_str(), read(ex), want_q, 0);
    compare((w + " dynamicScales").c_str(), read(dyn), want_s, 0);
    for (Dev *d : {&x, &ids, &sc, &ex, &dyn, &eidx, &nums, &eprc}) release(*d);
    printf("ok quant%s\n", smooth ? " smooth" : "");
}

/* DispatchV2 + CombineV2: rank r leaves its last r % 2 tokens inactive. */
static void test_v2(aclDataType dt) {
    const int64_t h = 32, k = 2, local = 2, experts = local * N, bs = 4;
    std::vector<Tokens> all;
    for (int r = 0; r < N; r++) {
        all.push_back(tokens_of(r, bs, h, k, experts, dt, 81));
        int64_t active = bs - r % 2;
        all[r].ids.resize(static_cast<size_t>(active * k)); /* the inactive tokens route nowhere */
    }
    Tokens me = all[static_cast<size_t>(R)];
    int64_t active = bs - R % 2;
    int64_t a = bs * N * std::min(local, k);
    std::vector<double> full_ids(static_cast<size_t>(bs * k), 0), mask(static_cast<size_t>(bs), 0);
    for (size_t i = 0; i < me.ids.size(); i++) full_ids[i] = me.ids[i];
    for (int64_t t = 0; t < active; t++) mask[static_cast<size_t>(t)] = 1;
    Dev x = make({bs, h}, dt, me.x);
    Dev ids = make({bs, k}, ACL_INT32, full_ids);
    Dev mk = make({bs}, ACL_BOOL, mask);
    Dev es = make({bs, k}, ACL_FLOAT, me.scales);
    Dev ex = make({a, h}, dt, {});
    Dev dyn = make({a}, ACL_FLOAT, {});
    Dev info = make({a * 128}, ACL_INT32, {});
    Dev nums = make({local}, ACL_INT64, {});
    Dev eprc = make({local * N}, ACL_INT32, {});
    Dev escl = make({a}, ACL_FLOAT, {});
    RUN(S, aclnnMoeDistributeDispatchV2, x.t, ids.t, nullptr, mk.t, es.t, G, N, R, experts, "", 0, 0, 0, 0, 0, 0, 0, 1,
        "hierarchy", ex.t, dyn.t, info.t, nums.t, eprc.t, nullptr, escl.t);
    std::vector<Row> rows = received(all, k, local);
    std::string w = std::string("dispatchV2 ") + dname(dt);
    std::vector<double> want_x(static_cast<size_t>(a * h), 0), want_nums(static_cast<size_t>(local), 0);
    for (size_t i = 0; i < rows.size(); i++) {
        for (int64_t q = 0; q < h; q++)
            want_x[i * h + q] = all[rows[i].src].x[static_cast<size_t>(rows[i].tok * h + q)];
        want_nums[static_cast<size_t>(rows[i].e - R * local)] += 1;
    }
    compare((w + " expandX").c_str(), read(ex), want_x, 0);
    compare((w + " expertTokenNums").c_str(), read(nums), want_nums, 0);
    std::vector<double> ep = read(eprc);
    g_checks++;
    if (ep[static_cast<size_t>(local * N - 1)] != static_cast<double>(rows.size())) {
        printf("FAIL %s epRecvCounts total %g, expected %zu\n", w.c_str(), ep[local * N - 1], rows.size());
        g_fail++;
    }
    std::vector<double> y(static_cast<size_t>(a * h), 0);
    for (size_t i = 0; i < rows.size(); i++)
        for (int64_t q = 0; q < h; q++) y[i * h + q] = as_type(want_x[i * h + q] + rows[i].e, dt);
    Dev ey = make({a, h}, dt, y);
    std::vector<double> shv = values(bs * h, dt, 500u + static_cast<unsigned>(R));
    Dev sh = make({bs, h}, dt, shv);
    Dev out = make({bs, h}, dt, {});
    RUN(S, aclnnMoeDistributeCombineV2, ey.t, ids.t, info.t, eprc.t, es.t, nullptr, mk.t, nullptr, nullptr, nullptr,
        escl.t, sh.t, G, N, R, experts, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, "hierarchy", out.t);
    std::vector<double> want(static_cast<size_t>(bs * h));
    for (int64_t t = 0; t < bs; t++)
        for (int64_t q = 0; q < h; q++) {
            float acc = 0;
            for (int64_t j = 0; t < active && j < k; j++) {
                double xv = as_type(me.x[static_cast<size_t>(t * h + q)] + me.ids[static_cast<size_t>(t * k + j)], dt);
                acc += static_cast<float>(me.scales[static_cast<size_t>(t * k + j)]) * static_cast<float>(xv);
            }
            float v = static_cast<float>(shv[static_cast<size_t>(t * h + q)]) + acc;
            want[static_cast<size_t>(t * h + q)] = as_type(v, dt);
        }
    compare((std::string("combineV2 ") + dname(dt)).c_str(), read(out), want, 0);
    uint64_t wsz = 0;
    aclOpExecutor *e = nullptr;
    expect("DispatchV2 commAlg ring",
           aclnnMoeDistributeDispatchV2GetWorkspaceSize(x.t, ids.t, nullptr, mk.t, es.t, G, N, R, experts, "", 0, 0, 0,
                                                        0, 0, 0, 0, 1, "ring", ex.t, dyn.t, info.t, nums.t, eprc.t,
                                                        nullptr, escl.t, &wsz, &e),
           561002, "commAlg");
    expect("DispatchV2 assistInfo small",
           aclnnMoeDistributeDispatchV2GetWorkspaceSize(x.t, ids.t, nullptr, mk.t, es.t, G, N, R, experts, "", 0, 0, 0,
                                                        0, 0, 0, 0, 1, nullptr, ex.t, dyn.t, eprc.t, nums.t, eprc.t,
                                                        nullptr, escl.t, &wsz, &e),
           561002, "assistInfoForCombine");
    expect("CombineV2 mask dtype",
           aclnnMoeDistributeCombineV2GetWorkspaceSize(ey.t, ids.t, info.t, eprc.t, es.t, nullptr, es.t, nullptr,
                                                       nullptr, nullptr, nullptr, nullptr, G, N, R, experts, "", 0, 0,
                                                       0, 0, 0, 0, 0, 0, 0, nullptr, out.t, &wsz, &e),
           ACLNN_ERR_PARAM_INVALID, "xActiveMask");
    for (Dev *d : {&x, &ids, &mk, &es, &ex, &dyn, &info, &nums, &eprc, &escl, &ey, &sh, &out}) release(*d);
    printf("ok v2 %s\n", dname(dt));
}

/* DispatchV2, then CombineAddRmsNorm (BFLOAT16, residual (Bs, 1, H)). */
static void test_add_rms_norm() {
    const int64_t h = 64, k = 2, local = 2, experts = local * N, bs = 3;
    const aclDataType dt = ACL_BF16;
    std::vector<Tokens> all;
    for (int r = 0; r < N; r++) all.push_back(tokens_of(r, bs, h, k, experts, dt, 91));
    const Tokens &me = all[static_cast<size_t>(R)];
    int64_t a = bs * N * std::min(local, k);
    std::vector<double> ids_d(me.ids.begin(), me.ids.end());
    Dev x = make({bs, h}, dt, me.x);
    Dev ids = make({bs, k}, ACL_INT32, ids_d);
    Dev es = make({bs, k}, ACL_FLOAT, me.scales);
    Dev ex = make({a, h}, dt, {});
    Dev dyn = make({a}, ACL_FLOAT, {});
    Dev info = make({a * 128}, ACL_INT32, {});
    Dev nums = make({local}, ACL_INT64, {});
    Dev eprc = make({local * N}, ACL_INT32, {});
    RUN(S, aclnnMoeDistributeDispatchV2, x.t, ids.t, nullptr, nullptr, es.t, G, N, R, experts, "", 0, 0, 0, 0, 0, 0, 0, 1,
        nullptr, ex.t, dyn.t, info.t, nums.t, eprc.t, nullptr, nullptr);
    std::vector<double> resv = values(bs * h, dt, 600u + static_cast<unsigned>(R)), gv = values(h, dt, 601, true, true);
    Dev res = make({bs, 1, h}, dt, resv);
    Dev gamma = make({h}, dt, gv);
    Dev y = make({bs, 1, h}, dt, {});
    Dev rstd = make({bs, 1, 1}, ACL_FLOAT, {});
    Dev xo = make({bs, 1, h}, dt, {});
    const float eps = 1e-6f;
    RUN(S, aclnnMoeDistributeCombineAddRmsNorm, ex.t, ids.t, info.t, eprc.t, es.t, res.t, gamma.t, nullptr, nullptr,
        nullptr, nullptr, nullptr, nullptr, nullptr, G, N, R, experts, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, nullptr, eps, y.t,
        rstd.t, xo.t);
    std::vector<double> wx(static_cast<size_t>(bs * h)), wy(wx.size()), wr(static_cast<size_t>(bs));
    for (int64_t t = 0; t < bs; t++) {
        double ss = 0;
        for (int64_t q = 0; q < h; q++) {
            float acc = 0;
            for (int64_t j = 0; j < k; j++)
                acc += static_cast<float>(me.scales[static_cast<size_t>(t * k + j)]) *
                       static_cast<float>(me.x[static_cast<size_t>(t * h + q)]);
            size_t i = static_cast<size_t>(t * h + q);
            wx[i] = as_type(as_type(acc, dt) + resv[i], dt);
            ss += wx[i] * wx[i];
        }
        double inv = 1.0 / std::sqrt(ss / static_cast<double>(h) + static_cast<double>(eps));
        wr[static_cast<size_t>(t)] = static_cast<float>(inv);
        for (int64_t q = 0; q < h; q++) {
            size_t i = static_cast<size_t>(t * h + q);
            wy[i] = as_type(wx[i] * inv * gv[static_cast<size_t>(q)], dt);
        }
    }
    compare("CombineAddRmsNorm xOut", read(xo), wx, 0);
    compare("CombineAddRmsNorm yOut", read(y), wy, 8e-3);
    compare("CombineAddRmsNorm rstdOut", read(rstd), wr, 1e-6);
    uint64_t wsz = 0;
    aclOpExecutor *e = nullptr;
    expect("CombineAddRmsNorm residual 2-D",
           aclnnMoeDistributeCombineAddRmsNormGetWorkspaceSize(
               ex.t, ids.t, info.t, eprc.t, es.t, x.t, gamma.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
               nullptr, G, N, R, experts, "", 0, 0, 0, 0, 0, 0, 0, 0, 0, nullptr, eps, y.t, rstd.t, xo.t, &wsz, &e),
           561002, "residualX");
    for (Dev *d : {&x, &ids, &es, &ex, &dyn, &info, &nums, &eprc, &res, &gamma, &y, &rstd, &xo}) release(*d);
    printf("ok add rms norm\n");
}

static void test_errors() {
    const int64_t h = 32, k = 2, local = 2, experts = local * N, bs = 4, a = bs * N * 2;
    const aclDataType dt = ACL_FLOAT16;
    Dev x = make({bs, h}, dt, {1});
    Dev x33 = make({bs, 33}, dt, {1});
    Dev ids = make({bs, k}, ACL_INT32, {0, 1});
    Dev ids64 = make({bs, k}, ACL_INT64, {0, 1});
    Dev es = make({bs, k}, ACL_FLOAT, {1});
    Dev ex = make({a, h}, dt, {});
    Dev ex_small = make({a - 1, h}, dt, {});
    Dev ex8 = make({a, h}, ACL_INT8, {});
    Dev dyn = make({a}, ACL_FLOAT, {});
    Dev eidx = make({bs * k}, ACL_INT32, {});
    Dev nums = make({local}, ACL_INT64, {});
    Dev eprc = make({local * N}, ACL_INT32, {});
    Dev out = make({bs, h}, dt, {});
    uint64_t ws = 0;
    aclOpExecutor *e = nullptr;
#define DISPATCH(X, IDS, GRP, W, RK, EXP, SHR, QM, GBS, EX)                                                    \
    aclnnMoeDistributeDispatchGetWorkspaceSize(X, IDS, nullptr, nullptr, es.t, GRP, W, RK, EXP, "", 0, 0, 0, 1, SHR, \
                                               QM, GBS, 1, EX, dyn.t, eidx.t, nums.t, eprc.t, nullptr, nullptr, &ws, &e)
    expect("Dispatch ok", DISPATCH(x.t, ids.t, G, N, R, experts, 0, 0, 0, ex.t), 0, nullptr);
    expect("Dispatch x NULL", DISPATCH(nullptr, ids.t, G, N, R, experts, 0, 0, 0, ex.t), ACLNN_ERR_PARAM_NULLPTR, "x");
    expect("Dispatch expertIds INT64", DISPATCH(x.t, ids64.t, G, N, R, experts, 0, 0, 0, ex.t),
           ACLNN_ERR_PARAM_INVALID, "expertIds");
    expect("Dispatch groupEp NULL", DISPATCH(x.t, ids.t, nullptr, N, R, experts, 0, 0, 0, ex.t),
           ACLNN_ERR_PARAM_NULLPTR, "groupEp");
    expect("Dispatch unknown group", DISPATCH(x.t, ids.t, "no_such_group", N, R, experts, 0, 0, 0, ex.t),
           ACLNN_ERR_PARAM_INVALID, "no_such_group");
    expect("Dispatch epWorldSize", DISPATCH(x.t, ids.t, G, N + 1, R, experts, 0, 0, 0, ex.t), 561002, "epWorldSize");
    expect("Dispatch epRankId", DISPATCH(x.t, ids.t, G, N, (R + 1) % N, experts, 0, 0, 0, ex.t), 561002, "epRankId");
    expect("Dispatch moeExpertNum", DISPATCH(x.t, ids.t, G, N, R, experts + 1, 0, 0, 0, ex.t), 561002,
           "moeExpertNum");
    expect("Dispatch sharedExpertRankNum", DISPATCH(x.t, ids.t, G, N, R, experts, 1, 0, 0, ex.t), 561002,
           "sharedExpertRankNum");
    expect("Dispatch quantMode 1", DISPATCH(x.t, ids.t, G, N, R, experts, 0, 1, 0, ex8.t), ACLNN_ERR_PARAM_INVALID,
           "quantMode 1");
    expect("Dispatch quantMode 2 expandX f16", DISPATCH(x.t, ids.t, G, N, R, experts, 0, 2, 0, ex.t),
           ACLNN_ERR_PARAM_INVALID, "expandX");
    expect("Dispatch H 33", DISPATCH(x33.t, ids.t, G, N, R, experts, 0, 0, 0, ex.t), 561002, "multiple of 32");
    expect("Dispatch expandX rows", DISPATCH(x.t, ids.t, G, N, R, experts, 0, 0, 0, ex_small.t), 561002, "expandX");
    expect("Dispatch globalBs", DISPATCH(x.t, ids.t, G, N, R, experts, 0, 0, bs * N - 1, ex.t), 561002, "globalBs");
#undef DISPATCH
    expect("Combine commQuantMode 2",
           aclnnMoeDistributeCombineGetWorkspaceSize(ex.t, ids.t, eidx.t, eprc.t, es.t, nullptr, nullptr, nullptr,
                                                     nullptr, nullptr, nullptr, G, N, R, experts, "", 0, 0, 0, 1, 0, 0,
                                                     0, 2, 0, out.t, &ws, &e),
           561002, "commQuantMode");
    expect("Combine groupList reserved",
           aclnnMoeDistributeCombineGetWorkspaceSize(ex.t, ids.t, eidx.t, eprc.t, es.t, nullptr, nullptr, nullptr,
                                                     nullptr, eprc.t, nullptr, G, N, R, experts, "", 0, 0, 0, 1, 0, 0,
                                                     0, 0, 0, out.t, &ws, &e),
           ACLNN_ERR_PARAM_INVALID, "groupList");
    expect("Combine expertScales NULL",
           aclnnMoeDistributeCombineGetWorkspaceSize(ex.t, ids.t, eidx.t, eprc.t, nullptr, nullptr, nullptr, nullptr,
                                                     nullptr, nullptr, nullptr, G, N, R, experts, "", 0, 0, 0, 1, 0, 0,
                                                     0, 0, 0, out.t, &ws, &e),
           ACLNN_ERR_PARAM_NULLPTR, "expertScales");
    expect("Combine tpWorldSize 2",
           aclnnMoeDistributeCombineGetWorkspaceSize(ex.t, ids.t, eidx.t, eprc.t, es.t, nullptr, nullptr, nullptr,
                                                     nullptr, nullptr, nullptr, G, N, R, experts, "tp", 2, 0, 0, 1, 0, 0,
                                                     0, 0, 0, out.t, &ws, &e),
           561002, "tpWorldSize");
    expect("Combine x dtype",
           aclnnMoeDistributeCombineGetWorkspaceSize(ex.t, ids.t, eidx.t, eprc.t, es.t, nullptr, nullptr, nullptr,
                                                     nullptr, nullptr, nullptr, G, N, R, experts, "", 0, 0, 0, 1, 0, 0,
                                                     0, 0, 0, es.t, &ws, &e),
           ACLNN_ERR_PARAM_INVALID, "x");
    for (Dev *d : {&x, &x33, &ids, &ids64, &es, &ex, &ex_small, &ex8, &dyn, &eidx, &nums, &eprc, &out}) release(*d);
    printf("ok errors\n");
}

static int env_int(const char *k, int dflt) {
    const char *v = getenv(k);
    return v && *v ? atoi(v) : dflt;
}

int main() {
    R = env_int("RANK_ID", -1);
    N = env_int("RANK_SIZE", -1);
    const char *table = getenv("RANK_TABLE_FILE");
    if (R < 0 || N < 1 || !table) {
        fprintf(stderr, "FAIL run as a job of `npu-emu run -n N` (RANK_ID, RANK_SIZE, RANK_TABLE_FILE)\n");
        return 1;
    }
    CHECK(aclInit(nullptr));
    int dev = env_int("ASCEND_DEVICE_ID", R);
    CHECK(aclrtSetDevice(dev));
    CHECK(aclrtCreateStream(&S));
    HcclComm comm = nullptr;
    HOK(HcclCommInitClusterInfo(table, static_cast<uint32_t>(R), &comm));
    HOK(HcclGetCommName(comm, G));
    const Case cases[] = {
        {"f16 equal bs", ACL_FLOAT16, 32, 3, 2, true, 1, true, 1},
        {"bf16 unequal bs", ACL_BF16, 64, 2, 3, false, 0, true, 2},
        {"f16 one expert per rank", ACL_FLOAT16, 32, 2, 1, true, 0, false, 3},
    };
    for (const Case &c : cases) test_case(c);
    test_quant(false);
    test_quant(true);
    test_v2(ACL_FLOAT16);
    test_v2(ACL_BF16);
    test_add_rms_norm();
    test_errors();
    HOK(HcclCommDestroy(comm));
    CHECK(aclrtDestroyStream(S));
    CHECK(aclrtResetDevice(dev));
    CHECK(aclFinalize());
    if (g_fail) {
        printf("aclnn_moe_dist rank %d/%d FAILED (%d of %d checks)\n", R, N, g_fail, g_checks);
        return 1;
    }
    printf("aclnn_moe_dist rank %d/%d passed (%d checks)\n", R, N, g_checks);
    return 0;
}
