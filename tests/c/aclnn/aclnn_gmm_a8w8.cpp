/* GroupedMatmulV4 / V5 in the A8W8 mode (INT8 x and weight), split along M, against a host
 * reference written from the aclnnGroupedMatmulV4 page's formula and CANN's kernel order:
 * y = act((x @ w + bias) * scale [* perTokenScale]) rounded once to y's type, the product
 * exact, the rest in double here (float32 on the device), so BFLOAT16 outputs compare to
 * 8e-3 and FLOAT16 to 2e-3 relative; INT8 requantised outputs (the 64-bit parameter's
 * scale and offset) to one unit, INT32 exactly. Rows past the last group must keep their
 * old contents. Each actType (0 none, 1 relu, 2 gelu_tanh, 4 fast_gelu, 5 silu) runs on
 * both entry points for both float outputs. Then the weight in FRACTAL_NZ (INT8 NZ storage
 * [E, N/32, K/16, 16, 32], packed here from that layout): aclnnGroupedMatmulWeightNz with
 * BFLOAT16 and FLOAT16 out (its page's two A2/A3 quantised rows) and V4/V5 (the V5 page's
 * A8W8 table: ND/NZ weight for BFLOAT16, FLOAT16 and INT32 out), against the same reference;
 * then the documented refusals (161002). */
#include <cmath>
#include <cstring>
#include <string>
#include "ops_ref.h"
#include "aclnnop/aclnn_grouped_matmul_v4.h"
#include "aclnnop/aclnn_grouped_matmul_v5.h"
#include "aclnnop/aclnn_grouped_matmul_weight_nz.h"

static aclrtStream S;

static aclTensorList *list(std::initializer_list<Dev *> ds) {
    std::vector<aclTensor *> v;
    for (Dev *d : ds) v.push_back(d->t), d->t = nullptr; /* the list owns them */
    return aclCreateTensorList(v.data(), v.size());
}

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, test_msg());
    }
}

static double act_ref(int act, double v) {
    switch (act) {
    case 1: return v > 0 ? v : 0;
    case 2: return 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
    case 4: return v / (1 + std::exp(-1.702 * v));
    case 5: return v / (1 + std::exp(-v));
    default: return v;
    }
}

static const int64_t M = 10, K = 16, N = 8, E = 3;
static const double SENTINEL = 3.0;

struct Inputs {
    int64_t k = K, n = N; /* this set's K and N */
    std::vector<double> X, W, B, Sf, P;
    std::vector<int> grp; /* expert of each row, -1 past the last group */
};

/* the reference for rows of `in.grp`; scale `sc` (already in its device type) */
static std::vector<double> reference(const Inputs &in, const std::vector<double> &sc, bool bias, bool pts, int act,
                                     aclDataType out) {
    const int64_t k = in.k, n = in.n;
    std::vector<double> want(M * n);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < n; j++) {
            int e = in.grp[i];
            if (e < 0) {
                want[i * n + j] = SENTINEL;
                continue;
            }
            double acc = bias ? in.B[e * n + j] : 0;
            for (int64_t p = 0; p < k; p++) acc += in.X[i * k + p] * in.W[e * k * n + p * n + j];
            if (out == ACL_INT32) {
                want[i * n + j] = acc;
                continue;
            }
            double v = acc * sc[e * n + j];
            if (pts) v *= in.P[i];
            want[i * n + j] = as_type(act_ref(act, v), out);
        }
    return want;
}

enum Api { V4 = 0, V5 = 1, WEIGHT_NZ = 2 };

/* GroupedMatmulV4, V5 or WeightNz, one run into a fresh y [M, n]; returns y */
static std::vector<double> run(int api, aclTensorList *xl, aclTensorList *wl, aclTensorList *bl, aclTensorList *sl,
                               aclTensorList *pl, aclTensor *gl, int64_t glType, int64_t act, aclDataType out, int64_t n = N) {
    Dev y = make({M, n}, out, std::vector<double>(M * n, SENTINEL));
    aclTensorList *yl = list({&y});
    if (api == WEIGHT_NZ) {
        RUN(S, aclnnGroupedMatmulWeightNz, xl, wl, bl, sl, nullptr, nullptr, nullptr, pl, gl, nullptr, nullptr, nullptr, 3, 0,
            glType, act, nullptr, 0, yl, nullptr, nullptr);
    } else if (api == V5) {
        RUN(S, aclnnGroupedMatmulV5, xl, wl, bl, sl, nullptr, nullptr, nullptr, pl, gl, nullptr, nullptr, nullptr, 3, 0, glType,
            act, nullptr, yl, nullptr, nullptr);
    } else {
        RUN(S, aclnnGroupedMatmulV4, xl, wl, bl, sl, nullptr, nullptr, nullptr, pl, gl, nullptr, nullptr, nullptr, 3, 0, glType,
            act, yl, nullptr, nullptr);
    }
    std::vector<double> got = read(y);
    aclDestroyTensorList(yl);
    release(y);
    return got;
}

/* The weight in FRACTAL_NZ: K 32 and N 64 (two fractals along each), same groups. */
static void nz_cases() {
    const int64_t KZ = 32, NZ = 64;
    Inputs in;
    in.k = KZ, in.n = NZ;
    in.X = values(M * KZ, ACL_INT8, 41);
    in.W = values(E * KZ * NZ, ACL_INT8, 42);
    in.B = values(E * NZ, ACL_INT32, 43);
    in.Sf = values(E * NZ, ACL_FLOAT, 44, true, true);
    for (auto &s : in.Sf) s = as_type(s * 1e-4, ACL_FLOAT);
    in.P = values(M, ACL_FLOAT, 45, true, true);
    for (auto &p : in.P) p = as_type(p * 0.05, ACL_FLOAT);
    in.grp = {0, 0, 0, 2, 2, 2, 2, 2, -1, -1};
    std::vector<double> Sb(in.Sf.size());
    for (size_t i = 0; i < Sb.size(); i++) Sb[i] = as_type(in.Sf[i], ACL_BF16);

    Dev x = make({M, KZ}, ACL_INT8, in.X), w = nz_weight_i8(in.W, E, KZ, NZ), b = make({E, NZ}, ACL_INT32, in.B);
    Dev sf = make({E, NZ}, ACL_FLOAT, in.Sf), sb = make({E, NZ}, ACL_BF16, Sb), p = make({M}, ACL_FLOAT, in.P);
    Dev gcum = make({E}, ACL_INT64, {3, 3, 8}), gcnt = make({E}, ACL_INT64, {3, 0, 5});
    aclTensorList *xl = list({&x}), *wl = list({&w}), *bl = list({&b}), *sfl = list({&sf}), *sbl = list({&sb}), *pl = list({&p});
    const char *names[] = {"GroupedMatmulV4", "GroupedMatmulV5", "GroupedMatmulWeightNz"};
    for (int act : {0, 1, 2, 4, 5}) {
        for (int api : {WEIGHT_NZ, V4, V5}) {
            std::string tag = std::string(names[api]) + " A8W8 NZ weight actType " + std::to_string(act);
            compare((tag + ", BFLOAT16 out, per-token, bias").c_str(),
                    run(api, xl, wl, bl, sbl, pl, gcum.t, 0, act, ACL_BF16, NZ), reference(in, Sb, true, true, act, ACL_BF16),
                    8e-3);
            compare((tag + ", FLOAT16 out, per-token, bias, counts").c_str(),
                    run(api, xl, wl, bl, sfl, pl, gcnt.t, 1, act, ACL_FLOAT16, NZ),
                    reference(in, in.Sf, true, true, act, ACL_FLOAT16), 2e-3);
            compare((tag + ", BFLOAT16 out, per-channel, no bias").c_str(),
                    run(api, xl, wl, nullptr, sbl, nullptr, gcum.t, 0, act, ACL_BF16, NZ),
                    reference(in, Sb, false, false, act, ACL_BF16), 8e-3);
        }
    }
    compare("GroupedMatmulV5 A8W8 NZ weight, INT32 out", run(V5, xl, wl, bl, nullptr, nullptr, gcum.t, 0, 0, ACL_INT32, NZ),
            reference(in, in.Sf, true, false, 0, ACL_INT32), 0);
    printf("ok grouped matmul a8w8 nz weight\n");

    /* refusals: INT8 out with an NZ weight (the V5 table's INT8 row is ND only), INT32 out
       through WeightNz (its page lists BFLOAT16 and FLOAT16 only), an NZ weight whose N is
       not a multiple of 32 */
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev y8 = make({M, NZ}, ACL_INT8, {0}), y32 = make({M, NZ}, ACL_INT32, {0}), sq = make({E, NZ}, ACL_INT64, {1});
    Dev xs = make({M, 16}, ACL_INT8, {1}), ws8 = nz_weight_i8(std::vector<double>(E * 16 * 8, 1), E, 16, 8),
        sbs = make({E, 8}, ACL_BF16, {1}), ys = make({M, 8}, ACL_BF16, {0});
    aclTensorList *y8l = list({&y8}), *y32l = list({&y32}), *sql = list({&sq}), *xsl = list({&xs}), *ws8l = list({&ws8}),
                  *sbsl = list({&sbs}), *ysl = list({&ys});
    expect_code("A8W8 NZ weight with INT8 out",
                aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bl, sql, nullptr, nullptr, nullptr, nullptr, gcum.t, nullptr, nullptr,
                                                     nullptr, 3, 0, 0, 0, y8l, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 WeightNz with INT32 out",
                aclnnGroupedMatmulWeightNzGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gcum.t, nullptr,
                                                           nullptr, nullptr, 3, 0, 0, 0, nullptr, 0, y32l, nullptr, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 WeightNz with N 8",
                aclnnGroupedMatmulWeightNzGetWorkspaceSize(xsl, ws8l, nullptr, sbsl, nullptr, nullptr, nullptr, nullptr, gcum.t,
                                                           nullptr, nullptr, nullptr, 3, 0, 0, 0, nullptr, 0, ysl, nullptr, nullptr,
                                                           &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (aclTensorList *l : {y8l, y32l, sql, xsl, ws8l, sbsl, ysl, xl, wl, bl, sfl, sbl, pl}) aclDestroyTensorList(l);
    for (Dev *d : {&y8, &y32, &sq, &xs, &ws8, &sbs, &ys, &x, &w, &b, &sf, &sb, &p, &gcum, &gcnt}) release(*d);
    printf("ok grouped matmul a8w8 nz weight refusals\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;

    Inputs in;
    in.X = values(M * K, ACL_INT8, 31);
    in.W = values(E * K * N, ACL_INT8, 32);
    in.B = values(E * N, ACL_INT32, 33);
    in.Sf = values(E * N, ACL_FLOAT, 34, true, true);
    for (auto &s : in.Sf) s = as_type(s * 1e-4, ACL_FLOAT);
    in.P = values(M, ACL_FLOAT, 35, true, true);
    for (auto &p : in.P) p = as_type(p * 0.05, ACL_FLOAT);
    /* cumulative {3, 3, 8}: rows 0-2 expert 0, expert 1 empty, rows 3-7 expert 2, rows 8-9 in no group */
    in.grp = {0, 0, 0, 2, 2, 2, 2, 2, -1, -1};
    std::vector<double> Sb(in.Sf.size());
    for (size_t i = 0; i < Sb.size(); i++) Sb[i] = as_type(in.Sf[i], ACL_BF16);

    Dev x = make({M, K}, ACL_INT8, in.X), w = make({E, K, N}, ACL_INT8, in.W), b = make({E, N}, ACL_INT32, in.B);
    Dev sf = make({E, N}, ACL_FLOAT, in.Sf), sb = make({E, N}, ACL_BF16, Sb), p = make({M}, ACL_FLOAT, in.P);
    Dev gcum = make({E}, ACL_INT64, {3, 3, 8}), gcnt = make({E}, ACL_INT64, {3, 0, 5});
    aclTensorList *xl = list({&x}), *wl = list({&w}), *bl = list({&b}), *sfl = list({&sf}), *sbl = list({&sb}), *pl = list({&p});

    for (int act : {0, 1, 2, 4, 5}) {
        for (bool v5 : {false, true}) {
            std::string api = v5 ? "GroupedMatmulV5" : "GroupedMatmulV4";
            std::string tag = api + " A8W8 actType " + std::to_string(act);
            /* BFLOAT16 out: scale BFLOAT16, per-token scale, INT32 bias, cumulative groupList */
            compare((tag + ", BFLOAT16 out, per-token, bias").c_str(), run(v5, xl, wl, bl, sbl, pl, gcum.t, 0, act, ACL_BF16),
                    reference(in, Sb, true, true, act, ACL_BF16), 8e-3);
            /* FLOAT16 out: scale FLOAT, per-token scale, INT32 bias, counts groupList */
            compare((tag + ", FLOAT16 out, per-token, bias, counts").c_str(),
                    run(v5, xl, wl, bl, sfl, pl, gcnt.t, 1, act, ACL_FLOAT16), reference(in, in.Sf, true, true, act, ACL_FLOAT16),
                    2e-3);
            /* per-channel only (no per-token scale), no bias */
            compare((tag + ", BFLOAT16 out, per-channel, no bias").c_str(),
                    run(v5, xl, wl, nullptr, sbl, nullptr, gcum.t, 0, act, ACL_BF16), reference(in, Sb, false, false, act, ACL_BF16),
                    8e-3);
            compare((tag + ", FLOAT16 out, per-channel, bias").c_str(), run(v5, xl, wl, bl, sfl, nullptr, gcum.t, 0, act, ACL_FLOAT16),
                    reference(in, in.Sf, true, false, act, ACL_FLOAT16), 2e-3);
        }
    }
    /* a transposed weight view ([E, K, N] with K contiguous) gives the same products */
    {
        Dev wt = make({E, K, N}, ACL_INT8, in.W, TRANSPOSED);
        aclTensorList *wtl = list({&wt});
        compare("GroupedMatmulV4 A8W8 transposed weight, BFLOAT16 out, silu", run(false, xl, wtl, bl, sbl, pl, gcum.t, 0, 5, ACL_BF16),
                reference(in, Sb, true, true, 5, ACL_BF16), 8e-3);
        aclDestroyTensorList(wtl);
        release(wt);
    }
    /* INT32 out: x @ w + bias, no scale */
    {
        std::vector<double> want(M * N);
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int e = in.grp[i];
                double acc = e < 0 ? SENTINEL : in.B[e * N + j];
                if (e >= 0)
                    for (int64_t q = 0; q < K; q++) acc += in.X[i * K + q] * in.W[e * K * N + q * N + j];
                want[i * N + j] = acc;
            }
        compare("GroupedMatmulV4 A8W8 INT32 out", run(false, xl, wl, bl, nullptr, nullptr, gcum.t, 0, 0, ACL_INT32), want, 0);
    }
    /* INT8 out: the 64-bit parameter (TransQuantParamV2's layout: float32 scale with the low
       13 bits cleared, 9-bit offset in bits 37-45, bit 46 set) */
    {
        std::vector<double> Q(E * N), scale(E * N), off(E * N);
        for (int64_t i = 0; i < E * N; i++) {
            float s;
            double f = in.Sf[i] * 4;
            s = static_cast<float>(f);
            uint32_t u;
            memcpy(&u, &s, 4);
            u &= 0xFFFFE000u;
            memcpy(&s, &u, 4);
            int o = static_cast<int>(i % 7) - 3;
            scale[i] = s, off[i] = o;
            uint64_t q = u | (static_cast<uint64_t>(o & 0x1FF) << 37) | (1ull << 46);
            Q[i] = static_cast<double>(q);
        }
        Dev sq = make({E, N}, ACL_INT64, Q);
        aclTensorList *sql = list({&sq});
        std::vector<double> got = run(true, xl, wl, bl, sql, nullptr, gcum.t, 0, 0, ACL_INT8);
        g_checks++;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                int e = in.grp[i];
                double want = SENTINEL;
                if (e >= 0) {
                    double acc = in.B[e * N + j];
                    for (int64_t q = 0; q < K; q++) acc += in.X[i * K + q] * in.W[e * K * N + q * N + j];
                    want = std::min(127.0, std::max(-128.0, std::nearbyint(acc * scale[e * N + j] + off[e * N + j])));
                }
                if (std::fabs(got[i * N + j] - want) > 1) {
                    printf("FAIL GroupedMatmulV5 A8W8 INT8 out: element %lld is %g, expected %g (+-1)\n",
                           static_cast<long long>(i * N + j), got[i * N + j], want);
                    g_fail++;
                    i = M;
                    break;
                }
            }
        aclDestroyTensorList(sql);
        release(sq);
    }
    printf("ok grouped matmul a8w8\n");

    /* refusals */
    Dev y16 = make({M, N}, ACL_FLOAT16, {0}), ybf = make({M, N}, ACL_BF16, {0}), y32 = make({M, N}, ACL_INT32, {0});
    Dev bbf = make({E, N}, ACL_BF16, {0}), p2 = make({M + 1}, ACL_FLOAT, {1}), s2 = make({E, N + 1}, ACL_BF16, {1});
    Dev sq = make({E, N}, ACL_INT64, {1});
    aclTensorList *y16l = list({&y16}), *ybfl = list({&ybf}), *y32l = list({&y32}), *bbfl = list({&bbf}), *p2l = list({&p2}),
                  *s2l = list({&s2}), *sql = list({&sq});
#define V4(bias, scale, pts, act, out, gtype) \
    aclnnGroupedMatmulV4GetWorkspaceSize(xl, wl, bias, scale, nullptr, nullptr, nullptr, pts, gcum.t, nullptr, nullptr, nullptr, 3, gtype, 0, act, out, nullptr, nullptr, &ws, &ex)
    expect_code("A8W8 per-token, scale FLOAT with BFLOAT16 out", V4(bl, sfl, pl, 0, ybfl, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 per-channel, scale UINT64/INT64 with FLOAT16 out", V4(bl, sql, nullptr, 0, y16l, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 scale BFLOAT16 with FLOAT16 out", V4(bl, sbl, pl, 0, y16l, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 actType 3", V4(bl, sbl, pl, 3, ybfl, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 actType 6", V4(bl, sbl, pl, 6, ybfl, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 actType 1 with INT32 out", V4(bl, nullptr, nullptr, 1, y32l, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 BFLOAT16 bias", V4(bbfl, sbl, pl, 0, ybfl, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 perTokenScale [M + 1]", V4(bl, sbl, p2l, 0, ybfl, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 scale [E, N + 1]", V4(bl, s2l, pl, 0, ybfl, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 no scale with BFLOAT16 out", V4(bl, nullptr, pl, 0, ybfl, 0), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 groupType 2", V4(bl, sbl, pl, 0, ybfl, 2), ACLNN_ERR_PARAM_INVALID);
    expect_code("A8W8 groupType -1", V4(bl, sbl, pl, 0, ybfl, -1), ACLNN_ERR_PARAM_INVALID);
#undef V4
    for (aclTensorList *l : {y16l, ybfl, y32l, bbfl, p2l, s2l, sql, xl, wl, bl, sfl, sbl, pl}) aclDestroyTensorList(l);
    for (Dev *d : {&y16, &ybf, &y32, &bbf, &p2, &s2, &sq, &x, &w, &b, &sf, &sb, &p, &gcum, &gcnt}) release(*d);
    printf("ok grouped matmul a8w8 refusals\n");
    nz_cases();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
