/* aclnnTopKTopPSampleV2 and aclnnSimThreadExponential (torch_npu.npu_top_k_top_p_sample and
 * npu_sim_exponential_):
 * - CANN's own V2 example (48 x 131072 BFLOAT16 logits, all equal: every row picks index 0);
 * - the exponential-race sample: 4000 identical rows, q drawn by SimThreadExponential; every
 *   pick lies in the top-k/top-p set and its frequency is near the renormalised probability;
 * - isNeedSampleResult (op-plugin's multiNomial path): kept probabilities and indices against
 *   a host reference, with top-k, top-p, min-p and isNeedLogits;
 * - SimThreadExponential: deterministic per (seed, offset), mean and variance of Exp(lambda),
 *   `count` below the element count leaves the tail alone;
 * - the documented argument errors (nullptr 161001, data type and shape 161002, q of another
 *   rank 561002, lambda <= 0 161002). */
#include <algorithm>
#include <cmath>
#include <numeric>
#include "ops_ref.h"
#include "aclnnop/aclnn_top_k_top_p_sample_v2.h"
#include "aclnnop/aclnn_sim_thread_exponential.h"

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

static void check(const char *what, bool ok) {
    g_checks++;
    if (!ok) {
        printf("FAIL %s\n", what);
        g_fail++;
    }
}

static void section(const char *name, int fails_before) {
    if (g_fail == fails_before) printf("ok %s\n", name);
}

static void cann_example() {
    int f0 = g_fail;
    const int64_t B = 48, V = 131072;
    /* the example fills BFLOAT16 tensors with the int16 pattern 1 */
    double tiny = bf16_to_f32(1);
    Dev lg = make({B, V}, ACL_BF16, {tiny}), k = make({B}, ACL_INT32, {128}), p = make({B}, ACL_BF16, {tiny});
    Dev q = make({B, V}, ACL_FLOAT, {1.0}), mp = make({B}, ACL_BF16, {tiny});
    Dev sel = make({B}, ACL_INT64, {-1}), kp = make({B, V}, ACL_FLOAT, {0}), li = make({B, V}, ACL_INT64, {0}),
        sm = make({B, V}, ACL_FLOAT, {0});
    RUN(S, aclnnTopKTopPSampleV2, lg.t, k.t, p.t, q.t, mp.t, 1e-8, false, 32, 1024, true, false, sel.t, kp.t, li.t,
        sm.t);
    compare("CANN example logitsSelectIdx", read(sel), std::vector<double>(B, 0), 0);
    section("cann_example", f0);
}

static std::vector<double> softmax(const std::vector<double> &x) {
    double m = *std::max_element(x.begin(), x.end()), s = 0;
    std::vector<double> e(x.size());
    for (size_t i = 0; i < x.size(); i++) s += e[i] = std::exp(x[i] - m);
    for (auto &v : e) v /= s;
    return e;
}

static void q_sample() {
    int f0 = g_fail;
    const int64_t B = 4000, V = 16;
    std::vector<double> row = {0.5, 2.0, -1.0, 1.5, 0.25, 1.75, -3.0, 1.0, 0.0, 2.25, -0.5, 0.75, 1.25, -2.0, 0.1, 0.6};
    std::vector<double> logits;
    for (int b = 0; b < B; b++) logits.insert(logits.end(), row.begin(), row.end());
    /* host: top-k 6 of the logits, softmax over them, top-p 0.8 over the descending prefix */
    std::vector<int> order(V);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
    order.resize(6);
    std::vector<double> vals;
    for (int i : order) vals.push_back(row[i]);
    std::vector<double> pr = softmax(vals);
    size_t n = 0;
    double before = 0;
    while (n < pr.size() && before < 0.8) before += pr[n++];
    std::vector<double> want(V, 0);
    double kept = 0;
    for (size_t j = 0; j < n; j++) kept += pr[j];
    for (size_t j = 0; j < n; j++) want[order[j]] = pr[j] / kept;

    Dev lg = make({B, V}, ACL_FLOAT, logits), k = make({B}, ACL_INT32, {6}), p = make({B}, ACL_FLOAT, {0.8});
    Dev q = make({B, V}, ACL_FLOAT, {0});
    RUN(S, aclnnSimThreadExponential, q.t, B * V, 1.0, 2024, 0);
    Dev sel = make({B}, ACL_INT64, {-1}), kp = make({B, V}, ACL_FLOAT, {0});
    RUN(S, aclnnTopKTopPSampleV2, lg.t, k.t, p.t, q.t, nullptr, 1e-8, true, 32, 1024, true, false, sel.t, kp.t,
        nullptr, nullptr);
    std::vector<double> got = read(sel), freq(V, 0);
    bool inside = true;
    for (double g : got) {
        if (g < 0 || g >= V || want[static_cast<int>(g)] == 0) inside = false;
        else freq[static_cast<int>(g)] += 1.0 / B;
    }
    check("every sampled index lies in the top-k/top-p set", inside);
    double worst = 0;
    for (int i = 0; i < V; i++) worst = std::max(worst, std::fabs(freq[i] - want[i]));
    printf("q-sample: %zu kept tokens, largest frequency error %.4f\n", n, worst);
    check("sample frequencies near the renormalised probabilities (|error| < 0.03)", worst < 0.03);
    /* isNeedLogits: the kept tokens' logits, -inf elsewhere */
    std::vector<double> kv = read(kp), wk(V, -INFINITY);
    for (size_t j = 0; j < n; j++) wk[order[j]] = row[order[j]];
    compare("logitsTopKPSelect row 0", std::vector<double>(kv.begin(), kv.begin() + V), wk, 0);
    /* the same q gives the same picks */
    Dev sel2 = make({B}, ACL_INT64, {-1});
    RUN(S, aclnnTopKTopPSampleV2, lg.t, k.t, p.t, q.t, nullptr, 1e-8, false, 32, 1024, true, false, sel2.t, kp.t,
        nullptr, nullptr);
    compare("same q, same picks", read(sel2), got, 0);
    section("q_sample", f0);
}

static void sample_result() {
    int f0 = g_fail;
    const int64_t B = 3, V = 10;
    std::vector<double> x = values(B * V, ACL_FLOAT16, 7);
    Dev lg = make({B, V}, ACL_FLOAT16, x);
    /* row 0: top-k 4 and top-p 0.7; row 1: neither (k > ksMax 8), min-p 0.3; row 2: top-k 5, min-p 1 */
    Dev k = make({B}, ACL_INT32, {4, 9, 5}), p = make({B}, ACL_FLOAT16, {0.7, 1.0, 1.0});
    Dev mp = make({B}, ACL_FLOAT16, {0.0, 0.3, 1.0});
    Dev sel = make({B, 1}, ACL_INT64, {-1}), kp = make({B, V}, ACL_FLOAT, {0}), li = make({B, V}, ACL_INT64, {7}),
        sm = make({B, V}, ACL_FLOAT, {7});
    RUN(S, aclnnTopKTopPSampleV2, lg.t, k.t, p.t, nullptr, mp.t, 1e-8, false, 32, 8, true, true, sel.t, kp.t, li.t,
        sm.t);
    std::vector<double> wi(B * V, 0), wm(B * V, 0);
    for (int b = 0; b < B; b++) {
        std::vector<double> row(x.begin() + b * V, x.begin() + (b + 1) * V);
        std::vector<int> idx(V);
        std::iota(idx.begin(), idx.end(), 0);
        std::vector<double> pr;
        if (b == 1) {
            pr = softmax(row);
            double thd = *std::max_element(pr.begin(), pr.end()) * as_type(0.3, ACL_FLOAT16);
            std::vector<int> i2;
            std::vector<double> p2;
            for (int i = 0; i < V; i++)
                if (pr[i] >= thd) i2.push_back(i), p2.push_back(pr[i]);
            idx = i2;
            pr = p2;
        } else {
            std::stable_sort(idx.begin(), idx.end(), [&](int a, int c) { return row[a] > row[c]; });
            idx.resize(b == 0 ? 4 : 5);
            std::vector<double> v;
            for (int i : idx) v.push_back(row[i]);
            pr = softmax(v);
            if (b == 0) {
                size_t n = 0;
                double before = 0, pp = as_type(0.7, ACL_FLOAT16);
                while (n < pr.size() && before < pp) before += pr[n++];
                idx.resize(n);
                pr.resize(n);
            } else {
                idx.resize(1);
                pr.resize(1);
            }
        }
        for (size_t j = 0; j < idx.size(); j++) {
            wi[b * V + j] = idx[j];
            wm[b * V + j] = pr[j];
        }
    }
    compare("isNeedSampleResult logitsIdx", read(li), wi, 0);
    compare("isNeedSampleResult logitsSortMasked", read(sm), wm, 1e-5);
    compare("isNeedSampleResult leaves logitsSelectIdx", read(sel), std::vector<double>(B, -1), 0);
    section("sample_result", f0);
}

static void sim_exponential() {
    int f0 = g_fail;
    const int64_t N = 20000;
    Dev a = make({100, 200}, ACL_FLOAT, {0}), b = make({100, 200}, ACL_FLOAT, {0});
    RUN(S, aclnnSimThreadExponential, a.t, N, 2.0, 5, 0);
    RUN(S, aclnnSimThreadExponential, b.t, N, 2.0, 5, 0);
    std::vector<double> va = read(a), vb = read(b);
    compare("same seed and offset, same draws", va, vb, 0);
    double m = 0, m2 = 0;
    bool pos = true;
    for (double v : va) {
        m += v / N;
        m2 += v * v / N;
        pos = pos && v >= 0 && std::isfinite(v);
    }
    double var = m2 - m * m;
    printf("exponential lambda 2: mean %.4f variance %.4f\n", m, var);
    check("draws finite and >= 0", pos);
    check("mean near 1/lambda", std::fabs(m - 0.5) < 0.02);
    check("variance near 1/lambda^2", std::fabs(var - 0.25) < 0.025);
    RUN(S, aclnnSimThreadExponential, b.t, N, 2.0, 6, 0);
    check("another seed, other draws", read(b) != va);
    Dev h = make({2, 5}, ACL_FLOAT16, {-1});
    RUN(S, aclnnSimThreadExponential, h.t, 6, 1.0, 5, 0);
    std::vector<double> hv = read(h);
    check("count 6 of 10 fills the first 6", std::all_of(hv.begin(), hv.begin() + 6, [](double v) { return v >= 0; }));
    compare("count 6 of 10 leaves the tail", std::vector<double>(hv.begin() + 6, hv.end()), {-1, -1, -1, -1}, 0);
    section("sim_thread_exponential", f0);
}

static void errors() {
    int f0 = g_fail;
    Dev lg = make({2, 8}, ACL_FLOAT, {0.5}), k = make({2}, ACL_INT32, {2}), p = make({2}, ACL_FLOAT, {0.9});
    Dev ph = make({2}, ACL_FLOAT16, {0.9}), q = make({2, 8}, ACL_FLOAT, {1}), q1 = make({16}, ACL_FLOAT, {1});
    Dev qh = make({2, 8}, ACL_FLOAT16, {1}), k3 = make({3}, ACL_INT32, {2});
    Dev sel = make({2}, ACL_INT64, {0}), kp = make({2, 8}, ACL_FLOAT, {0});
    expect_code("V2 null logits",
                aclnnTopKTopPSampleV2GetWorkspaceSize(nullptr, k.t, p.t, q.t, nullptr, 1e-8, false, 32, 1024, true,
                                                      false, sel.t, kp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    expect_code("V2 topP of another dtype than logits",
                aclnnTopKTopPSampleV2GetWorkspaceSize(lg.t, k.t, ph.t, q.t, nullptr, 1e-8, false, 32, 1024, true,
                                                      false, sel.t, kp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("V2 FLOAT16 q",
                aclnnTopKTopPSampleV2GetWorkspaceSize(lg.t, k.t, p.t, qh.t, nullptr, 1e-8, false, 32, 1024, true,
                                                      false, sel.t, kp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("V2 topK of 3 for 2 batches",
                aclnnTopKTopPSampleV2GetWorkspaceSize(lg.t, k3.t, p.t, q.t, nullptr, 1e-8, false, 32, 1024, true,
                                                      false, sel.t, kp.t, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("V2 1-D q",
                aclnnTopKTopPSampleV2GetWorkspaceSize(lg.t, k.t, p.t, q1.t, nullptr, 1e-8, false, 32, 1024, true,
                                                      false, sel.t, kp.t, nullptr, nullptr, &ws, &ex),
                561002);
    expect_code("SimThreadExponential lambda 0", aclnnSimThreadExponentialGetWorkspaceSize(q.t, 16, 0.0, 1, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("SimThreadExponential INT32 selfRef",
                aclnnSimThreadExponentialGetWorkspaceSize(k.t, 2, 1.0, 1, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("SimThreadExponential null selfRef",
                aclnnSimThreadExponentialGetWorkspaceSize(nullptr, 2, 1.0, 1, 0, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    section("errors", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    cann_example();
    q_sample();
    sample_result();
    sim_exponential();
    errors();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
