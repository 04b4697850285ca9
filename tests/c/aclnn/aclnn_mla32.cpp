/* DeepSeek's MLA preprocessing (aclnnMlaProlog, aclnnMlaPrologV2WeightNz,
 * aclnnMlaPrologV3WeightNz), the non-quantized scenario, against a float64 host reference of
 * the pages' formulas:
 *   cQ = RmsNorm(x·Wdq)·gammaCq (rounded to BFLOAT16, the next matmul's input),
 *   [qC | qR'] = cQ·WuqQr per head (rounded to BFLOAT16), qN = alphaQ·qC·Wuk[n], qR = ROPE(qR'),
 *   [cKV' | kR'] = x·WdkvKr, kvCache[idx] = alphaKv·RmsNorm(cKV')·gammaCkv, krCache[idx] = ROPE(kR');
 * ROPE as CANN's kernel: the input de-interleaved (even then odd elements), then
 * x·cos + rotate_half(x)·sin. Weights in FRACTAL_NZ ([N/16, K/16, 16, 16] as CANN's examples
 * create them) and ND; tokens (T, He) and (B, S, He); caches PA_BSND; plus the argument errors. */
#include <algorithm>
#include <cmath>
#include "ops_ref.h"
#include "aclnnop/aclnn_mla_prolog.h"
#include "aclnnop/aclnn_mla_prolog_v2_weight_nz.h"
#include "aclnnop/aclnn_mla_prolog_v3_weight_nz.h"

static aclrtStream S;

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

static double bf(double v) { return bf16_to_f32(f32_to_bf16(static_cast<float>(v))); }

/* Uniform-ish BFLOAT16 values in [-amp, amp). */
static std::vector<double> rnd(size_t n, unsigned seed, double amp) {
    std::vector<double> v(n);
    uint32_t x = 2463534242u ^ (seed * 2654435761u);
    for (auto &e : v) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        e = bf(amp * ((x % 20001) / 10000.0 - 1.0));
    }
    return v;
}

/* A [K, N] BFLOAT16 weight stored FRACTAL_NZ: storage [N/16, K/16, 16, 16], view the same. */
static Dev make_nz(int64_t K, int64_t N, const std::vector<double> &w) {
    Shape st = {N / 16, K / 16, 16, 16};
    std::vector<double> s(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++)
            s[static_cast<size_t>(((n / 16) * (K / 16) + k / 16) * 256 + (k % 16) * 16 + n % 16)] =
                w[static_cast<size_t>(k * N + n) % w.size()];
    Dev d = make(st, ACL_BF16, s);
    aclDestroyTensor(d.t);
    d.t = aclCreateTensor(st.data(), st.size(), ACL_BF16, nullptr, 0, ACL_FORMAT_FRACTAL_NZ, st.data(), st.size(),
                          d.mem);
    return d;
}

static std::vector<double> matmul(const std::vector<double> &a, const std::vector<double> &b, int64_t m, int64_t k,
                                  int64_t n) {
    std::vector<double> c(static_cast<size_t>(m * n), 0);
    for (int64_t i = 0; i < m; i++)
        for (int64_t kk = 0; kk < k; kk++) {
            double av = a[static_cast<size_t>(i * k + kk)];
            for (int64_t j = 0; j < n; j++) c[static_cast<size_t>(i * n + j)] += av * b[static_cast<size_t>(kk * n + j)];
        }
    return c;
}

static void rms(double *x, const std::vector<double> &g, int64_t n, double eps) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
    double r = 1.0 / std::sqrt(s / n + eps);
    for (int64_t i = 0; i < n; i++) x[i] = x[i] * r * g[static_cast<size_t>(i)];
}

/* The kernel's ROPE of one row of length dr. */
static void rope(const double *x, const double *sn, const double *cs, double *out, int64_t dr) {
    int64_t h = dr / 2;
    for (int64_t i = 0; i < h; i++) {
        double a = x[2 * i], b = x[2 * i + 1];
        out[i] = a * cs[i] - b * sn[i];
        out[h + i] = b * cs[h + i] + a * sn[h + i];
    }
}

enum Api { V1, V2, V3 };
static const int64_t HE = 7168, HCQ = 1536, HCKV = 512, D = 128, DR = 64;

struct Case {
    Api api;
    bool nz;
    bool bsnd3; /* tokenX (B, S, He) instead of (T, He) */
    int64_t b, s, n, blocks, block;
    double aq, akv;
    const char *name;
};

static void run_case(const Case &c) {
    int f0 = g_fail;
    const int64_t T = c.b * c.s, N = c.n, NQ = N * (D + DR);
    const double eps = 1e-5;
    std::vector<double> x = rnd(T * HE, 1, 1.0), wdq = rnd(HE * HCQ, 2, 0.03), wuq = rnd(HCQ * NQ, 3, 0.05),
                        wuk = rnd(N * D * HCKV, 4, 0.1), wkv = rnd(HE * (HCKV + DR), 5, 0.03),
                        gq = rnd(HCQ, 6, 1.5), gkv = rnd(HCKV, 7, 1.5), sn = rnd(T * DR, 8, 1.0),
                        cs = rnd(T * DR, 9, 1.0);
    std::vector<double> idx(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; t++) idx[static_cast<size_t>(t)] = (t * 37 + 5) % (c.blocks * c.block);
    /* host reference */
    std::vector<double> cq = matmul(x, wdq, T, HE, HCQ);
    for (int64_t t = 0; t < T; t++) rms(&cq[static_cast<size_t>(t * HCQ)], gq, HCQ, eps);
    for (auto &v : cq) v = bf(v);
    std::vector<double> qcqr = matmul(cq, wuq, T, HCQ, NQ);
    for (auto &v : qcqr) v = bf(v);
    std::vector<double> kvkr = matmul(x, wkv, T, HE, HCKV + DR);
    std::vector<double> wq(static_cast<size_t>(T * N * HCKV), 0), wqr(static_cast<size_t>(T * N * DR));
    const double sentinel = 0.5;
    std::vector<double> wkvc(static_cast<size_t>(c.blocks * c.block * HCKV), sentinel),
        wkrc(static_cast<size_t>(c.blocks * c.block * DR), sentinel);
    for (int64_t t = 0; t < T; t++) {
        for (int64_t h = 0; h < N; h++) {
            const double *q = &qcqr[static_cast<size_t>((t * N + h) * (D + DR))];
            double *o = &wq[static_cast<size_t>((t * N + h) * HCKV)];
            for (int64_t d = 0; d < D; d++)
                for (int64_t j = 0; j < HCKV; j++) o[j] += q[d] * wuk[static_cast<size_t>((h * D + d) * HCKV + j)];
            for (int64_t j = 0; j < HCKV; j++) o[j] *= c.aq;
            rope(q + D, &sn[static_cast<size_t>(t * DR)], &cs[static_cast<size_t>(t * DR)],
                 &wqr[static_cast<size_t>((t * N + h) * DR)], DR);
        }
        double *row = &kvkr[static_cast<size_t>(t * (HCKV + DR))];
        rms(row, gkv, HCKV, eps);
        int64_t r = static_cast<int64_t>(idx[static_cast<size_t>(t)]);
        for (int64_t j = 0; j < HCKV; j++) wkvc[static_cast<size_t>(r * HCKV + j)] = row[j] * c.akv;
        rope(row + HCKV, &sn[static_cast<size_t>(t * DR)], &cs[static_cast<size_t>(t * DR)],
             &wkrc[static_cast<size_t>(r * DR)], DR);
    }
    /* device */
    Shape lead = c.bsnd3 ? Shape{c.b, c.s} : Shape{T};
    auto with = [&](std::initializer_list<int64_t> tail) {
        Shape s = lead;
        s.insert(s.end(), tail);
        return s;
    };
    Dev dx = make(with({HE}), ACL_BF16, x);
    Dev dwdq = c.nz ? make_nz(HE, HCQ, wdq) : make({HE, HCQ}, ACL_BF16, wdq);
    Dev dwuq = c.nz ? make_nz(HCQ, NQ, wuq) : make({HCQ, NQ}, ACL_BF16, wuq);
    Dev dwuk = make({N, D, HCKV}, ACL_BF16, wuk);
    Dev dwkv = c.nz ? make_nz(HE, HCKV + DR, wkv) : make({HE, HCKV + DR}, ACL_BF16, wkv);
    Dev dgq = make({HCQ}, ACL_BF16, gq), dgkv = make({HCKV}, ACL_BF16, gkv);
    Dev dsn = make(with({DR}), ACL_BF16, sn), dcs = make(with({DR}), ACL_BF16, cs);
    Dev didx = make(lead, ACL_INT64, idx);
    Dev dkvc = make({c.blocks, c.block, 1, HCKV}, ACL_BF16, {sentinel});
    Dev dkrc = make({c.blocks, c.block, 1, DR}, ACL_BF16, {sentinel});
    Dev dq = make(with({N, HCKV}), ACL_BF16, {0}), dqr = make(with({N, DR}), ACL_BF16, {0});
    char mode[] = "PA_BSND";
    if (c.api == V1) {
        RUN(S, aclnnMlaProlog, dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t, didx.t, dkvc.t,
            dkrc.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, eps, eps, mode, dq.t, dqr.t);
    } else if (c.api == V2) {
        RUN(S, aclnnMlaPrologV2WeightNz, dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t, didx.t,
            dkvc.t, dkrc.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, eps, eps, mode, dq.t,
            dqr.t, nullptr);
    } else {
        RUN(S, aclnnMlaPrologV3WeightNz, dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t, dkvc.t,
            dkrc.t, didx.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, eps, eps, mode,
            false, 0, 0, 0, 0, 0, 128, 1.0, c.aq, c.akv, dq.t, dqr.t, nullptr, nullptr, nullptr);
    }
    std::string n = c.name;
    compare((n + " queryOut").c_str(), read(dq), wq, 0.02);
    compare((n + " queryRopeOut").c_str(), read(dqr), wqr, 0.02);
    compare((n + " kvCacheRef").c_str(), read(dkvc), wkvc, 0.02);
    compare((n + " krCacheRef").c_str(), read(dkrc), wkrc, 0.02);
    for (Dev *d : {&dx, &dwdq, &dwuq, &dwuk, &dwkv, &dgq, &dgkv, &dsn, &dcs, &didx, &dkvc, &dkrc, &dq, &dqr}) release(*d);
    section(c.name, f0);
}

static void errors() {
    int f0 = g_fail;
    const int64_t T = 2, N = 1, NQ = N * (D + DR);
    Dev dx = make({T, HE}, ACL_BF16, {0.5});
    Dev dwdq = make_nz(HE, HCQ, {0.01}), dwuq = make_nz(HCQ, NQ, {0.01}), dwkv = make_nz(HE, HCKV + DR, {0.01});
    Dev dwuk = make({N, D, HCKV}, ACL_BF16, {0.1});
    Dev dgq = make({HCQ}, ACL_BF16, {1}), dgkv = make({HCKV}, ACL_BF16, {1});
    Dev dsn = make({T, DR}, ACL_BF16, {0}), dcs = make({T, DR}, ACL_BF16, {1});
    Dev didx = make({T}, ACL_INT64, {0}), didx_bad = make({T}, ACL_INT64, {1 << 20});
    Dev dkvc = make({1, 16, 1, HCKV}, ACL_BF16, {0}), dkrc = make({1, 16, 1, DR}, ACL_BF16, {0});
    Dev dq = make({T, N, HCKV}, ACL_BF16, {0}), dqr = make({T, N, DR}, ACL_BF16, {0});
    Dev scale = make({1, HCKV}, ACL_FLOAT, {1});
    Dev dq_f32 = make({T, N, HCKV}, ACL_FLOAT, {0});
    char mode[] = "PA_BSND", bad_mode[] = "BSND";
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    const double eps = 1e-5;
    expect_code("MlaProlog tokenX nullptr",
                aclnnMlaPrologGetWorkspaceSize(nullptr, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t,
                                               didx.t, dkvc.t, dkrc.t, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, nullptr, eps, eps, mode, dq.t, dqr.t, &ws, &ex),
                161001);
    expect_code("MlaProlog cacheMode",
                aclnnMlaPrologGetWorkspaceSize(dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t,
                                               didx.t, dkvc.t, dkrc.t, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, nullptr, eps, eps, bad_mode, dq.t, dqr.t, &ws, &ex),
                161002);
    expect_code("MlaProlog queryOut FLOAT",
                aclnnMlaPrologGetWorkspaceSize(dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t,
                                               didx.t, dkvc.t, dkrc.t, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, nullptr, eps, eps, mode, dq_f32.t, dqr.t, &ws, &ex),
                161002);
    expect_code("MlaProlog wrong Hcq (weightUqQr K)",
                aclnnMlaPrologGetWorkspaceSize(dx.t, dwdq.t, dwkv.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t,
                                               didx.t, dkvc.t, dkrc.t, nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, nullptr, eps, eps, mode, dq.t, dqr.t, &ws, &ex),
                161002);
    expect_code("MlaPrologV2WeightNz quantized (quantScaleCkv)",
                aclnnMlaPrologV2WeightNzGetWorkspaceSize(dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t,
                                                         dcs.t, didx.t, dkvc.t, dkrc.t, nullptr, nullptr, nullptr,
                                                         nullptr, scale.t, nullptr, nullptr, eps, eps, mode, dq.t,
                                                         dqr.t, nullptr, &ws, &ex),
                161002);
    expect_code("MlaPrologV3WeightNz weightQuantMode 1",
                aclnnMlaPrologV3WeightNzGetWorkspaceSize(dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t,
                                                         dcs.t, dkvc.t, dkrc.t, didx.t, nullptr, nullptr, nullptr,
                                                         nullptr, nullptr, nullptr, nullptr, nullptr, eps, eps, mode,
                                                         false, 1, 0, 0, 0, 0, 128, 1.0, 1.0, 1.0, dq.t, dqr.t,
                                                         nullptr, nullptr, nullptr, &ws, &ex),
                161002);
    /* a cache index past the cache fails the launch */
    NN(aclnnMlaPrologGetWorkspaceSize(dx.t, dwdq.t, dwuq.t, dwuk.t, dwkv.t, dgq.t, dgkv.t, dsn.t, dcs.t, didx_bad.t,
                                      dkvc.t, dkrc.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      eps, eps, mode, dq.t, dqr.t, &ws, &ex));
    NN(aclnnMlaProlog(nullptr, ws, ex, S));
    aclError e = aclrtSynchronizeStream(S);
    g_checks++;
    if (e == ACL_SUCCESS) {
        printf("FAIL cache index past the cache: synchronize succeeded\n");
        g_fail++;
    } else {
        printf("error cache index past the cache: %d %s\n", e, aclGetRecentErrMsg());
    }
    section("errors", f0);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    run_case({V1, true, true, 2, 2, 2, 2, 16, 1.0, 1.0, "mla_prolog_v1_nz_bsh"});
    run_case({V1, false, false, 3, 1, 1, 1, 128, 1.0, 1.0, "mla_prolog_v1_nd_th"});
    run_case({V2, true, false, 3, 1, 4, 1, 128, 1.0, 1.0, "mla_prolog_v2_nz_th"});
    run_case({V3, true, true, 1, 3, 2, 2, 16, 0.5, 2.0, "mla_prolog_v3_nz_scales"});
    errors();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
