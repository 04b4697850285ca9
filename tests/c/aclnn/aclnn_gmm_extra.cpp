/* The older and NZ-weight forms of GroupedMatmul against a host reference: aclnnGroupedMatmul
 * (V1, an aclIntArray group list and splitItem), V2 (groupType, FLOAT32, the K split), V3
 * (the group list as an INT64 tensor) and WeightNz (weights in FRACTAL_NZ written here by
 * hand: storage [E, N/16, K/16, 16, 16] with element (k, n) at [n/16][k/16][k%16][n%16]);
 * and GroupedMatmulFinalizeRouting (V1, V2, V3, WeightNz, WeightNzV2; the A8W8 form: INT8 x
 * and weight, FLOAT32 per-channel scale and per-token scale, scatter-added into the output
 * by rowIndex with the logit, plus the shared expert's rows; INT8 NZ storage
 * [E, N/32, K/16, 16, 32]), GroupedMatmulAdd (+V2: y[e] += x[k_e]^T @ w[k_e] in float32), and
 * QuantMatmulWeightNz (INT8 x1, INT8 x2 in FRACTAL_NZ, FLOAT32 per-channel scale, BFLOAT16 out);
 * each with documented argument errors (ACLNN_ERR_PARAM_NULLPTR / ACLNN_ERR_PARAM_INVALID).
 * Tolerances: products accumulate in float32 on the device and in double here, rounded once
 * to the output type: float16/bfloat16 compare to 1e-2 relative, float32 to 1e-5. Inputs
 * include a transposed x. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_grouped_matmul.h"
#include "aclnnop/aclnn_grouped_matmul_v2.h"
#include "aclnnop/aclnn_grouped_matmul_v3.h"
#include "aclnnop/aclnn_grouped_matmul_weight_nz.h"
#include "aclnnop/aclnn_grouped_matmul_finalize_routing.h"
#include "aclnnop/aclnn_grouped_matmul_add.h"
#include "aclnnop/aclnn_grouped_matmul_add_v2.h"
#include "aclnnop/aclnn_quant_matmul_weight_nz.h"
#include "aclnnop/aclnn_grouped_matmul_finalize_routing_v2.h"
#include "aclnnop/aclnn_grouped_matmul_finalize_routing_v3.h"
#include "aclnnop/aclnn_grouped_matmul_finalize_routing_weight_nz.h"
#include "aclnnop/aclnn_grouped_matmul_finalize_routing_weight_nz_v2.h"

static aclrtStream S;

static void expect_code(const char *what, aclnnStatus got, int want) {
    g_checks++;
    if (static_cast<int>(got) != want) {
        printf("FAIL %s: returned %d, expected %d (%s)\n", what, static_cast<int>(got), want, test_msg());
        g_fail++;
    } else if (want != 0) {
        printf("error %s: %s\n", what, test_msg());
    }
}

/* A list over the tensors of `ds`; the Devs keep their memory (the list owns the handles). */
static aclTensorList *list(std::initializer_list<Dev *> ds) {
    std::vector<aclTensor *> v;
    for (Dev *d : ds) v.push_back(d->t), d->t = nullptr;
    return aclCreateTensorList(v.data(), v.size());
}

/* y[r, n] (+)= sum_k x[r, k] * w[k, n] + b[n] for rows [r0, r0 + rows) of x into rows starting
 * at y0 of y (row strides K and N; w at w0 in a [.., K, N] array). */
static void ref_mm(const std::vector<double> &x, int64_t r0, int64_t rows, int64_t K, const std::vector<double> &w,
                   int64_t w0, int64_t N, const std::vector<double> *b, int64_t b0, std::vector<double> &y, int64_t y0,
                   aclDataType t) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t n = 0; n < N; n++) {
            double acc = b ? (*b)[static_cast<size_t>(b0 + n)] : 0;
            for (int64_t k = 0; k < K; k++)
                acc += x[static_cast<size_t>((r0 + r) * K + k)] * w[static_cast<size_t>(w0 + k * N + n)];
            y[static_cast<size_t>((y0 + r) * N + n)] = as_type(acc, t);
        }
}

static double tol(aclDataType t) { return t == ACL_FLOAT ? 1e-5 : 1e-2; }

/* ---- V1: x, weight, y lists; one x cut by the aclIntArray; one y ---- */
static void v1() {
    const int64_t K = 8, N = 5;
    /* (a) x, weight, bias and y one per group (splitItem 0), float16 */
    {
        aclDataType t = ACL_FLOAT16;
        std::vector<double> X0 = values(3 * K, t, 1), X1 = values(2 * K, t, 2), W0 = values(K * N, t, 3),
                            W1 = values(K * N, t, 4), B0 = values(N, t, 5), B1 = values(N, t, 6);
        Dev x0 = make({3, K}, t, X0), x1 = make({2, K}, t, X1, TRANSPOSED), w0 = make({K, N}, t, W0), w1 = make({K, N}, t, W1),
            b0 = make({N}, t, B0), b1 = make({N}, t, B1), y0 = make({3, N}, t, {0}), y1 = make({2, N}, t, {0});
        aclTensorList *xl = list({&x0, &x1}), *wl = list({&w0, &w1}), *bl = list({&b0, &b1}), *yl = list({&y0, &y1});
        Dev r0 = y0, r1 = y1;
        RUN(S, aclnnGroupedMatmul, xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, 0, yl);
        std::vector<double> want0(3 * N), want1(2 * N);
        ref_mm(X0, 0, 3, K, W0, 0, N, &B0, 0, want0, 0, t);
        ref_mm(X1, 0, 2, K, W1, 0, N, &B1, 0, want1, 0, t);
        compare("GroupedMatmul V1 splitItem 0: y[0]", read(r0), want0, tol(t));
        compare("GroupedMatmul V1 splitItem 0 (x[1] transposed): y[1]", read(r1), want1, tol(t));
        /* errors on these lists */
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        expect_code("GroupedMatmul V1 null x", aclnnGroupedMatmulGetWorkspaceSize(nullptr, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, 0, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("GroupedMatmul V1 null y", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, 0, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("GroupedMatmul V1 splitItem 4", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, 4, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmul V1 splitItem 2 with two y", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, 2, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmul V1 scaleOptional given (quantised)", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, bl, nullptr, nullptr, nullptr, nullptr, 0, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        Dev ys = make({4, N}, t, {0});
        aclTensorList *ysl = list({&ys});
        expect_code("GroupedMatmul V1 splitItem 2 with y [4, N] for 5 rows", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, 2, ysl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyTensorList(ysl);
        aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(bl), aclDestroyTensorList(yl);
        for (Dev *d : {&r0, &r1, &ys}) release(*d);
        for (Dev *d : {&x0, &x1, &w0, &w1, &b0, &b1}) aclrtFree(d->mem);
    }
    /* (b) one x [7, K] bfloat16 cut by groupList {2, 2, 7} (group 1 empty), three weights,
     * bias float32, one y (splitItem 3) */
    {
        aclDataType t = ACL_BF16;
        std::vector<double> X = values(7 * K, t, 7), W0 = values(K * N, t, 8), W1 = values(K * N, t, 9),
                            W2 = values(K * N, t, 10), B = values(3 * N, ACL_FLOAT, 11);
        std::vector<double> B0(B.begin(), B.begin() + N), B2(B.begin() + 2 * N, B.end());
        std::vector<double> B1(B.begin() + N, B.begin() + 2 * N);
        Dev x = make({7, K}, t, X), w0 = make({K, N}, t, W0), w1 = make({K, N}, t, W1), w2 = make({K, N}, t, W2),
            b0 = make({N}, ACL_FLOAT, B0), b1 = make({N}, ACL_FLOAT, B1), b2 = make({N}, ACL_FLOAT, B2), y = make({7, N}, t, {0});
        aclTensorList *xl = list({&x}), *wl = list({&w0, &w1, &w2}), *bl = list({&b0, &b1, &b2}), *yl = list({&y});
        Dev r = y;
        int64_t g[3] = {2, 2, 7};
        aclIntArray *gl = aclCreateIntArray(g, 3);
        RUN(S, aclnnGroupedMatmul, xl, wl, bl, nullptr, nullptr, nullptr, nullptr, gl, 3, yl);
        std::vector<double> want(7 * N);
        ref_mm(X, 0, 2, K, W0, 0, N, &B0, 0, want, 0, t);
        ref_mm(X, 2, 5, K, W2, 0, N, &B2, 0, want, 2, t);
        compare("GroupedMatmul V1 one x cut by groupList {2, 2, 7}, one y (bfloat16, float32 bias)", read(r), want, tol(t));
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        int64_t bad[3] = {3, 2, 7}, over[3] = {2, 2, 9};
        aclIntArray *gb = aclCreateIntArray(bad, 3), *go = aclCreateIntArray(over, 3), *g2 = aclCreateIntArray(g, 2);
        expect_code("GroupedMatmul V1 decreasing groupList {3, 2, 7}", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, gb, 3, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmul V1 groupList past x's rows {2, 2, 9}", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, go, 3, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmul V1 groupList of 2 for 3 weights", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, g2, 3, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmul V1 one x for 3 groups without groupList", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, 3, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyIntArray(gb), aclDestroyIntArray(go), aclDestroyIntArray(g2);
        /* bfloat16 with a bfloat16 bias: the bias must be FLOAT32 */
        Dev c0 = make({N}, t, B0), c1 = make({N}, t, B1), c2 = make({N}, t, B2);
        aclTensorList *cl = list({&c0, &c1, &c2});
        expect_code("GroupedMatmul V1 bfloat16 x with a bfloat16 bias", aclnnGroupedMatmulGetWorkspaceSize(xl, wl, cl, nullptr, nullptr, nullptr, nullptr, gl, 3, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyTensorList(cl);
        aclDestroyIntArray(gl);
        aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(bl), aclDestroyTensorList(yl);
        release(r);
        for (Dev *d : {&x, &w0, &w1, &w2, &b0, &b1, &b2, &c0, &c1, &c2}) aclrtFree(d->mem);
    }
    /* (c) two x into one y (splitItem 2), float16; and float32 is refused by V1 */
    {
        aclDataType t = ACL_FLOAT16;
        std::vector<double> X0 = values(2 * K, t, 12), X1 = values(3 * K, t, 13), W0 = values(K * N, t, 14), W1 = values(K * N, t, 15);
        Dev x0 = make({2, K}, t, X0), x1 = make({3, K}, t, X1), w0 = make({K, N}, t, W0), w1 = make({K, N}, t, W1), y = make({5, N}, t, {0});
        aclTensorList *xl = list({&x0, &x1}), *wl = list({&w0, &w1}), *yl = list({&y});
        Dev r = y;
        RUN(S, aclnnGroupedMatmul, xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 2, yl);
        std::vector<double> want(5 * N);
        ref_mm(X0, 0, 2, K, W0, 0, N, nullptr, 0, want, 0, t);
        ref_mm(X1, 0, 3, K, W1, 0, N, nullptr, 0, want, 2, t);
        compare("GroupedMatmul V1 two x into one y (splitItem 2)", read(r), want, tol(t));
        aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(yl);
        release(r);
        for (Dev *d : {&x0, &x1, &w0, &w1}) aclrtFree(d->mem);
        Dev f = make({2, K}, ACL_FLOAT, {1}), fw = make({K, N}, ACL_FLOAT, {1}), fy = make({2, N}, ACL_FLOAT, {0});
        aclTensorList *fl = list({&f}), *fwl = list({&fw}), *fyl = list({&fy});
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        expect_code("GroupedMatmul V1 float32 (V2 on)", aclnnGroupedMatmulGetWorkspaceSize(fl, fwl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, fyl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        RUN(S, aclnnGroupedMatmulV2, fl, fwl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0, -1, fyl);
        compare("GroupedMatmulV2 float32 groupType -1: 1 * 1 summed over K", read(fy), std::vector<double>(2 * N, K), 0);
        aclDestroyTensorList(fl), aclDestroyTensorList(fwl), aclDestroyTensorList(fyl);
        for (Dev *d : {&f, &fw, &fy}) aclrtFree(d->mem);
    }
    printf("ok grouped matmul v1\n");
}

/* ---- V2: float32 split along M into per-group y; the K split ---- */
static void v2() {
    aclDataType t = ACL_FLOAT;
    const int64_t K = 6, N = 4;
    {
        std::vector<double> X = values(4 * K, t, 21), W = values(2 * K * N, t, 22);
        std::vector<double> W0(W.begin(), W.begin() + K * N), W1(W.begin() + K * N, W.end());
        Dev x = make({4, K}, t, X), w0 = make({K, N}, t, W0), w1 = make({K, N}, t, W1), y0 = make({1, N}, t, {0}), y1 = make({3, N}, t, {0});
        aclTensorList *xl = list({&x}), *wl = list({&w0, &w1}), *yl = list({&y0, &y1});
        Dev r0 = y0, r1 = y1;
        int64_t g[2] = {1, 4};
        aclIntArray *gl = aclCreateIntArray(g, 2);
        RUN(S, aclnnGroupedMatmulV2, xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, gl, 1, 0, yl);
        std::vector<double> want0(N), want1(3 * N);
        ref_mm(X, 0, 1, K, W0, 0, N, nullptr, 0, want0, 0, t);
        ref_mm(X, 1, 3, K, W1, 0, N, nullptr, 0, want1, 0, t);
        compare("GroupedMatmulV2 float32 split M into y[0] (1 row)", read(r0), want0, tol(t));
        compare("GroupedMatmulV2 float32 split M into y[1] (3 rows)", read(r1), want1, tol(t));
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        expect_code("GroupedMatmulV2 groupType 1", aclnnGroupedMatmulV2GetWorkspaceSize(xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, gl, 1, 1, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulV2 groupType -1 with a groupList", aclnnGroupedMatmulV2GetWorkspaceSize(xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, gl, 1, -1, yl, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyIntArray(gl);
        aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(yl);
        for (Dev *d : {&r0, &r1}) release(*d);
        for (Dev *d : {&x, &w0, &w1}) aclrtFree(d->mem);
    }
    /* K split: x [3, K] (stored transposed, as the reference asks), weight [K, N], groupList
     * {2, 2, 6} (group 1 empty: zeros), y [3, 3, N] */
    {
        const int64_t M = 3;
        std::vector<double> X = values(M * K, t, 23), W = values(K * N, t, 24);
        Dev x = make({M, K}, t, X, TRANSPOSED), w = make({K, N}, t, W), y = make({3, M, N}, t, {7});
        aclTensorList *xl = list({&x}), *wl = list({&w}), *yl = list({&y});
        Dev r = y;
        int64_t g[3] = {2, 2, 6};
        aclIntArray *gl = aclCreateIntArray(g, 3);
        RUN(S, aclnnGroupedMatmulV2, xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, gl, 3, 2, yl);
        std::vector<double> want(static_cast<size_t>(3 * M * N), 0);
        int64_t ks[4] = {0, 2, 2, 6};
        for (int e = 0; e < 3; e++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t n = 0; n < N; n++) {
                    double acc = 0;
                    for (int64_t k = ks[e]; k < ks[e + 1]; k++) acc += X[static_cast<size_t>(i * K + k)] * W[static_cast<size_t>(k * N + n)];
                    want[static_cast<size_t>((e * M + i) * N + n)] = as_type(acc, t);
                }
        compare("GroupedMatmulV2 split K (x transposed, an empty group writes zeros)", read(r), want, tol(t));
        aclDestroyIntArray(gl);
        aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(yl);
        release(r);
        for (Dev *d : {&x, &w}) aclrtFree(d->mem);
    }
    printf("ok grouped matmul v2\n");
}

/* ---- V3: the group list as an INT64 tensor, a stacked [E, K, N] weight, bias [E, N] ---- */
static void v3() {
    aclDataType t = ACL_FLOAT16;
    const int64_t M = 5, K = 8, N = 6, E = 2;
    std::vector<double> X = values(M * K, t, 31), W = values(E * K * N, t, 32), B = values(E * N, t, 33);
    Dev x = make({M, K}, t, X), w = make({E, K, N}, t, W), b = make({E, N}, t, B), gl = make({E}, ACL_INT64, {3, 5}),
        y = make({M, N}, t, {0});
    aclTensorList *xl = list({&x}), *wl = list({&w}), *bl = list({&b}), *yl = list({&y});
    Dev r = y;
    RUN(S, aclnnGroupedMatmulV3, xl, wl, bl, nullptr, nullptr, nullptr, nullptr, gl.t, 3, 0, yl);
    std::vector<double> want(M * N);
    ref_mm(X, 0, 3, K, W, 0, N, &B, 0, want, 0, t);
    ref_mm(X, 3, 2, K, W, K * N, N, &B, N, want, 3, t);
    compare("GroupedMatmulV3 groupList tensor {3, 5}, [E, K, N] weight, [E, N] bias", read(r), want, tol(t));
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev gi = make({E}, ACL_INT32, {3, 5});
    expect_code("GroupedMatmulV3 INT32 groupList", aclnnGroupedMatmulV3GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, gi.t, 3, 0, yl, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    Dev g3 = make({3}, ACL_INT64, {1, 3, 5});
    expect_code("GroupedMatmulV3 groupList of 3 for 2 experts", aclnnGroupedMatmulV3GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, g3.t, 3, 0, yl, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    /* a group list past x's rows fails the task */
    Dev gover = make({E}, ACL_INT64, {3, 9});
    NN(aclnnGroupedMatmulV3GetWorkspaceSize(xl, wl, bl, nullptr, nullptr, nullptr, nullptr, gover.t, 3, 0, yl, &ws, &ex));
    void *wsm = nullptr;
    if (ws > 0) CHECK(aclrtMalloc(&wsm, ws, ACL_MEM_MALLOC_HUGE_FIRST));
    aclnnStatus st = aclnnGroupedMatmulV3(wsm, ws, ex, S);
    aclError sync = aclrtSynchronizeStream(S);
    g_checks++;
    if (st == 0 && sync == ACL_SUCCESS) {
        printf("FAIL GroupedMatmulV3 groupList {3, 9} past x's 5 rows: the task succeeded\n");
        g_fail++;
    } else {
        printf("error GroupedMatmulV3 groupList past x's rows: launch %d, sync %d\n", static_cast<int>(st), static_cast<int>(sync));
    }
    if (wsm) aclrtFree(wsm);
    aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(bl), aclDestroyTensorList(yl);
    for (Dev *d : {&r, &gl, &gi, &g3, &gover}) release(*d);
    for (Dev *d : {&x, &w, &b}) aclrtFree(d->mem);
    printf("ok grouped matmul v3\n");
}

/* A float16 weight [E, K, N] (E = 0: 2-D [K, N]) in FRACTAL_NZ, written by hand. */
static Dev nz_weight(const std::vector<double> &W, int64_t E, int64_t K, int64_t N) {
    int64_t e = E > 0 ? E : 1, k1 = (K + 15) / 16, n1 = (N + 15) / 16;
    int64_t per = n1 * k1 * 256;
    std::vector<uint16_t> host(static_cast<size_t>(e * per), 0);
    for (int64_t g = 0; g < e; g++)
        for (int64_t k = 0; k < K; k++)
            for (int64_t n = 0; n < N; n++)
                host[static_cast<size_t>(g * per + ((n / 16) * k1 + k / 16) * 256 + (k % 16) * 16 + n % 16)] =
                    f32_to_f16(static_cast<float>(W[static_cast<size_t>((g * K + k) * N + n)]));
    Dev d;
    d.dt = ACL_FLOAT16;
    d.bytes = host.size() * 2;
    d.shape = E > 0 ? Shape{E, K, N} : Shape{K, N};
    d.strides = E > 0 ? Shape{K * N, N, 1} : Shape{N, 1};
    CHECK(aclrtMalloc(&d.mem, d.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(d.mem, d.bytes, host.data(), d.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    Shape storage = E > 0 ? Shape{E, n1, k1, 16, 16} : Shape{n1, k1, 16, 16};
    d.t = aclCreateTensor(d.shape.data(), d.shape.size(), ACL_FLOAT16, d.strides.data(), 0, ACL_FORMAT_FRACTAL_NZ,
                          storage.data(), storage.size(), d.mem);
    if (d.t == nullptr) {
        fprintf(stderr, "FAIL aclCreateTensor (FRACTAL_NZ): %s\n", test_msg());
        exit(1);
    }
    return d;
}

/* ---- WeightNz: FRACTAL_NZ weights, counts group list ---- */
static void weight_nz() {
    aclDataType t = ACL_FLOAT16;
    const int64_t M = 6, K = 40, N = 20, E = 2;
    std::vector<double> X = values(M * K, t, 41), W = values(E * K * N, t, 42), B = values(E * N, t, 43);
    /* (a) one [E, K, N] weight in NZ, groupListType 1 (counts {4, 2}), one y */
    {
        Dev x = make({M, K}, t, X), w = nz_weight(W, E, K, N), gl = make({E}, ACL_INT64, {4, 2}), y = make({M, N}, t, {0});
        aclTensorList *xl = list({&x}), *wl = list({&w}), *yl = list({&y});
        Dev r = y;
        RUN(S, aclnnGroupedMatmulWeightNz, xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr,
            nullptr, nullptr, 3, 0, 1, 0, nullptr, 0, yl, nullptr, nullptr);
        std::vector<double> want(M * N);
        ref_mm(X, 0, 4, K, W, 0, N, nullptr, 0, want, 0, t);
        ref_mm(X, 4, 2, K, W, K * N, N, nullptr, 0, want, 4, t);
        compare("GroupedMatmulWeightNz [E, K, N] weight in FRACTAL_NZ, counts groupList {4, 2}", read(r), want, tol(t));
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        expect_code("GroupedMatmulWeightNz actType 1", aclnnGroupedMatmulWeightNzGetWorkspaceSize(xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 1, 1, nullptr, 0, yl, nullptr, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulWeightNz groupListType 2", aclnnGroupedMatmulWeightNzGetWorkspaceSize(xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 2, 0, nullptr, 0, yl, nullptr, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulWeightNz null weight", aclnnGroupedMatmulWeightNzGetWorkspaceSize(xl, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr, nullptr, nullptr, 3, 0, 1, 0, nullptr, 0, yl, nullptr, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("GroupedMatmulWeightNz perTokenScaleOptional given", aclnnGroupedMatmulWeightNzGetWorkspaceSize(xl, wl, nullptr, nullptr, nullptr, nullptr, nullptr, yl, gl.t, nullptr, nullptr, nullptr, 3, 0, 1, 0, nullptr, 0, yl, nullptr, nullptr, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(yl);
        for (Dev *d : {&r, &gl}) release(*d);
        for (Dev *d : {&x, &w}) aclrtFree(d->mem);
    }
    /* (b) a list of two [K, N] NZ weights with biases, cumulative groupList {1, 6}, one y per group */
    {
        std::vector<double> W0(W.begin(), W.begin() + K * N), W1(W.begin() + K * N, W.end());
        std::vector<double> B0(B.begin(), B.begin() + N), B1(B.begin() + N, B.end());
        Dev x = make({M, K}, t, X), w0 = nz_weight(W0, 0, K, N), w1 = nz_weight(W1, 0, K, N), b0 = make({N}, t, B0),
            b1 = make({N}, t, B1), gl = make({E}, ACL_INT64, {1, 6}), y0 = make({1, N}, t, {0}), y1 = make({5, N}, t, {0});
        aclTensorList *xl = list({&x}), *wl = list({&w0, &w1}), *bl = list({&b0, &b1}), *yl = list({&y0, &y1});
        Dev r0 = y0, r1 = y1;
        RUN(S, aclnnGroupedMatmulWeightNz, xl, wl, bl, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t, nullptr,
            nullptr, nullptr, 0, 0, 0, 0, nullptr, 0, yl, nullptr, nullptr);
        std::vector<double> want0(N), want1(5 * N);
        ref_mm(X, 0, 1, K, W0, 0, N, &B0, 0, want0, 0, t);
        ref_mm(X, 1, 5, K, W1, 0, N, &B1, 0, want1, 0, t);
        compare("GroupedMatmulWeightNz two NZ weights with bias: y[0]", read(r0), want0, tol(t));
        compare("GroupedMatmulWeightNz two NZ weights with bias: y[1]", read(r1), want1, tol(t));
        aclDestroyTensorList(xl), aclDestroyTensorList(wl), aclDestroyTensorList(bl), aclDestroyTensorList(yl);
        for (Dev *d : {&r0, &r1, &gl}) release(*d);
        for (Dev *d : {&x, &w0, &w1, &b0, &b1}) aclrtFree(d->mem);
    }
    printf("ok grouped matmul weight nz\n");
}

/* ---- GroupedMatmulFinalizeRouting (A8W8) ---- */

/* out[row[i]] += logit[i] * (x_i @ w_g) * scale[g] * pertoken[i] for the rows of the groups
 * (cumulative ends), plus sharedWeight * shared at row sharedOffset. */
static std::vector<double> ref_fr(const std::vector<double> &X, const std::vector<double> &W, const std::vector<double> &SC,
                                  const std::vector<double> *PT, const std::vector<int64_t> &ends, const std::vector<double> *SH,
                                  int64_t shRows, double shW, int64_t shOff, const std::vector<double> *LG,
                                  const std::vector<double> &RI, int64_t K, int64_t N, int64_t BS) {
    std::vector<double> out(static_cast<size_t>(BS * N), 0);
    if (SH)
        for (int64_t i = 0; i < shRows * N; i++) out[static_cast<size_t>(shOff * N + i)] = (*SH)[static_cast<size_t>(i)] * shW;
    int64_t start = 0;
    for (size_t g = 0; g < ends.size(); g++) {
        for (int64_t i = start; i < ends[g]; i++)
            for (int64_t n = 0; n < N; n++) {
                double acc = 0;
                for (int64_t k = 0; k < K; k++)
                    acc += X[static_cast<size_t>(i * K + k)] * W[static_cast<size_t>((static_cast<int64_t>(g) * K + k) * N + n)];
                double v = acc * SC[g * static_cast<size_t>(N) + static_cast<size_t>(n)] * (PT ? (*PT)[static_cast<size_t>(i)] : 1.0);
                out[static_cast<size_t>(static_cast<int64_t>(RI[static_cast<size_t>(i)]) * N + n)] += v * (LG ? (*LG)[static_cast<size_t>(i)] : 1.0);
            }
        start = ends[g];
    }
    return out;
}

static void finalize_routing() {
    const int64_t E = 3, M = 7, K = 32, N = 40, BS = 4;
    std::vector<double> X = values(M * K, ACL_INT8, 51), W = values(E * K * N, ACL_INT8, 52);
    std::vector<double> SC = values(E * N, ACL_FLOAT, 53, true, true), PT = values(M, ACL_FLOAT, 54, true, true),
                        LG = values(M, ACL_FLOAT, 55, true, true), SH = values(2 * N, ACL_BF16, 56);
    for (auto &v : SC) v = as_type(v / 64, ACL_FLOAT);
    std::vector<double> RI = {3, 0, 2, 0, 1, 3, 2};
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    /* (a) V1, V2, V3: ND weight, cumulative groupList {2, 5, 7}, per-token scale, shared rows
     * [2, N] at offset 1 with weight 0.5, logit, rowIndex into 4 output rows (collisions) */
    {
        Dev x = make({M, K}, ACL_INT8, X), w = make({E, K, N}, ACL_INT8, W), sc = make({E, N}, ACL_FLOAT, SC),
            pt = make({M}, ACL_FLOAT, PT), gl = make({E}, ACL_INT64, {2, 5, 7}), sh = make({2, N}, ACL_BF16, SH),
            lg = make({M}, ACL_FLOAT, LG), ri = make({M}, ACL_INT64, RI), o = make({BS, N}, ACL_FLOAT, {9});
        std::vector<double> want = ref_fr(X, W, SC, &PT, {2, 5, 7}, &SH, 2, 0.5, 1, &LG, RI, K, N, BS);
        RUN(S, aclnnGroupedMatmulFinalizeRouting, x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false,
            false, 0, o.t);
        compare("GroupedMatmulFinalizeRouting (V1) A8W8 with shared rows, logit and colliding rowIndex", read(o), want, 1e-5);
        RUN(S, aclnnGroupedMatmulFinalizeRoutingV2, x.t, w.t, sc.t, nullptr, nullptr, nullptr, nullptr, pt.t, gl.t, sh.t, lg.t,
            ri.t, 0, 0.5f, 1, false, false, 0, o.t);
        compare("GroupedMatmulFinalizeRoutingV2 (same case)", read(o), want, 1e-5);
        int64_t tune[1] = {4};
        aclIntArray *tc = aclCreateIntArray(tune, 1);
        RUN(S, aclnnGroupedMatmulFinalizeRoutingV3, x.t, w.t, sc.t, nullptr, nullptr, nullptr, nullptr, pt.t, gl.t, sh.t, lg.t,
            ri.t, 0, 0.5f, 1, false, false, 0, tc, o.t);
        compare("GroupedMatmulFinalizeRoutingV3 (same case, tuningConfig {4})", read(o), want, 1e-5);
        aclDestroyIntArray(tc);
        /* errors */
        expect_code("GroupedMatmulFinalizeRouting dtype 1", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 1, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulFinalizeRouting transposeW", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, true, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulFinalizeRouting null scale", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, nullptr, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("GroupedMatmulFinalizeRouting null x", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(nullptr, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_NULLPTR);
        expect_code("GroupedMatmulFinalizeRouting bias given (reserved)", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, sc.t, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulFinalizeRouting sharedInput without logit", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, nullptr, ri.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulFinalizeRouting sharedInputOffset 3 (2 rows past 4)", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 3, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulFinalizeRouting groupListType 2", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, false, 2, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        expect_code("GroupedMatmulFinalizeRoutingWeightNz with an ND weight", aclnnGroupedMatmulFinalizeRoutingWeightNzGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        Dev g2 = make({2}, ACL_INT64, {2, 7});
        expect_code("GroupedMatmulFinalizeRouting groupList of 2 for 3 experts", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, g2.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        Dev xf = make({M, K}, ACL_FLOAT16, {1});
        expect_code("GroupedMatmulFinalizeRouting float16 x", aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(xf.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, ri.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex),
                    ACLNN_ERR_PARAM_INVALID);
        /* a rowIndex value past the output's rows fails the task */
        Dev rbad = make({M}, ACL_INT64, {0, 1, 2, 3, 4, 0, 1});
        NN(aclnnGroupedMatmulFinalizeRoutingGetWorkspaceSize(x.t, w.t, sc.t, nullptr, pt.t, gl.t, sh.t, lg.t, rbad.t, 0, 0.5f, 1, false, false, 0, o.t, &ws, &ex));
        void *wsm = nullptr;
        if (ws > 0) CHECK(aclrtMalloc(&wsm, ws, ACL_MEM_MALLOC_HUGE_FIRST));
        aclnnStatus st = aclnnGroupedMatmulFinalizeRouting(wsm, ws, ex, S);
        aclError sync = aclrtSynchronizeStream(S);
        g_checks++;
        if (st == 0 && sync == ACL_SUCCESS) {
            printf("FAIL GroupedMatmulFinalizeRouting rowIndex 4 for 4 output rows: the task succeeded\n");
            g_fail++;
        } else {
            printf("error GroupedMatmulFinalizeRouting rowIndex past the output: launch %d, sync %d\n", static_cast<int>(st), static_cast<int>(sync));
        }
        if (wsm) aclrtFree(wsm);
        for (Dev *d : {&x, &w, &sc, &pt, &gl, &sh, &lg, &ri, &o, &g2, &xf, &rbad}) release(*d);
    }
    /* (b) WeightNz, WeightNzV2: INT8 NZ weight, counts groupList {3, 0, 4}, no per-token scale,
     * no shared rows or logit, INT32 rowIndex permuting the 7 rows */
    {
        std::vector<double> RP = {6, 2, 0, 5, 1, 3, 4};
        Dev x = make({M, K}, ACL_INT8, X), w = nz_weight_i8(W, E, K, N), sc = make({E, N}, ACL_FLOAT, SC),
            gl = make({E}, ACL_INT64, {3, 0, 4}), ri = make({M}, ACL_INT32, RP), o = make({M, N}, ACL_FLOAT, {9});
        std::vector<double> want = ref_fr(X, W, SC, nullptr, {3, 3, 7}, nullptr, 0, 0, 0, nullptr, RP, K, N, M);
        RUN(S, aclnnGroupedMatmulFinalizeRoutingWeightNz, x.t, w.t, sc.t, nullptr, nullptr, gl.t, nullptr, nullptr, ri.t, 0,
            1.0f, 0, false, false, 1, o.t);
        compare("GroupedMatmulFinalizeRoutingWeightNz INT8 NZ weight, counts groupList {3, 0, 4}, INT32 rowIndex", read(o), want, 1e-5);
        Dev o2 = make({M, N}, ACL_FLOAT, {9});
        RUN(S, aclnnGroupedMatmulFinalizeRoutingWeightNzV2, x.t, w.t, sc.t, nullptr, nullptr, nullptr, nullptr, nullptr, gl.t,
            nullptr, nullptr, ri.t, 0, 1.0f, 0, false, false, 1, nullptr, o2.t);
        compare("GroupedMatmulFinalizeRoutingWeightNzV2 (same case)", read(o2), want, 1e-5);
        for (Dev *d : {&x, &w, &sc, &gl, &ri, &o, &o2}) release(*d);
    }
    printf("ok grouped matmul finalize routing\n");
}

/* ---- GroupedMatmulAdd (+V2): yRef[e] += x[k_e, :]^T @ w[k_e, :] ---- */
static void grouped_matmul_add() {
    const int64_t K = 10, M = 3, N = 4, E = 3;
    for (aclDataType t : {ACL_FLOAT16, ACL_BF16}) {
        std::vector<double> X = values(K * M, t, 61), W = values(K * N, t, 62), Y = values(E * M * N, ACL_FLOAT, 63);
        /* cumulative {4, 4, 10}: group 1 empty (unchanged) */
        std::vector<int64_t> ends = {4, 4, 10};
        std::vector<double> want(Y);
        int64_t s0 = 0;
        for (int64_t e = 0; e < E; e++) {
            for (int64_t i = 0; i < M; i++)
                for (int64_t n = 0; n < N; n++) {
                    double acc = 0;
                    for (int64_t k = s0; k < ends[static_cast<size_t>(e)]; k++)
                        acc += X[static_cast<size_t>(k * M + i)] * W[static_cast<size_t>(k * N + n)];
                    want[static_cast<size_t>((e * M + i) * N + n)] += acc;
                }
            s0 = ends[static_cast<size_t>(e)];
        }
        for (auto &v : want) v = as_type(v, ACL_FLOAT);
        Dev x = make({K, M}, t, X), w = make({K, N}, t, W), gl = make({E}, ACL_INT64, {4, 4, 10}),
            y = make({E * M, N}, ACL_FLOAT, Y), y3 = make({E, M, N}, ACL_FLOAT, Y), gc = make({E}, ACL_INT64, {4, 0, 6});
        RUN(S, aclnnGroupedMatmulAdd, x.t, w.t, gl.t, y.t, true, false, 2);
        compare(t == ACL_FLOAT16 ? "GroupedMatmulAdd float16, yRef [E*M, N], cumulative {4, 4, 10}"
                                 : "GroupedMatmulAdd bfloat16, yRef [E*M, N], cumulative {4, 4, 10}",
                read(y), want, 1e-5);
        RUN(S, aclnnGroupedMatmulAddV2, x.t, w.t, gc.t, y3.t, true, false, 2, 1);
        compare(t == ACL_FLOAT16 ? "GroupedMatmulAddV2 float16, yRef [E, M, N], counts {4, 0, 6}"
                                 : "GroupedMatmulAddV2 bfloat16, yRef [E, M, N], counts {4, 0, 6}",
                read(y3), want, 1e-5);
        if (t == ACL_FLOAT16) {
            uint64_t ws = 0;
            aclOpExecutor *ex = nullptr;
            expect_code("GroupedMatmulAdd transposeX false", aclnnGroupedMatmulAddGetWorkspaceSize(x.t, w.t, gl.t, y.t, false, false, 2, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("GroupedMatmulAdd groupType 0", aclnnGroupedMatmulAddGetWorkspaceSize(x.t, w.t, gl.t, y.t, true, false, 0, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("GroupedMatmulAdd null groupList", aclnnGroupedMatmulAddGetWorkspaceSize(x.t, w.t, nullptr, y.t, true, false, 2, &ws, &ex),
                        ACLNN_ERR_PARAM_NULLPTR);
            expect_code("GroupedMatmulAddV2 groupListType 2", aclnnGroupedMatmulAddV2GetWorkspaceSize(x.t, w.t, gl.t, y.t, true, false, 2, 2, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            Dev yh = make({E * M, N}, ACL_FLOAT16, {0}), wk = make({K + 1, N}, t, {1});
            expect_code("GroupedMatmulAdd float16 yRef", aclnnGroupedMatmulAddGetWorkspaceSize(x.t, w.t, gl.t, yh.t, true, false, 2, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            expect_code("GroupedMatmulAdd weight K 11 for x K 10", aclnnGroupedMatmulAddGetWorkspaceSize(x.t, wk.t, gl.t, y.t, true, false, 2, &ws, &ex),
                        ACLNN_ERR_PARAM_INVALID);
            release(yh), release(wk);
        }
        for (Dev *d : {&x, &w, &gl, &y, &y3, &gc}) release(*d);
    }
    printf("ok grouped matmul add\n");
}

/* ---- QuantMatmulWeightNz: INT8 x1 [M, K] @ INT8 x2 [K, N] (NZ) * scale[n] -> BFLOAT16 ---- */
static void quant_matmul_weight_nz() {
    const int64_t M = 5, K = 48, N = 40;
    std::vector<double> A = values(M * K, ACL_INT8, 71), Bw = values(K * N, ACL_INT8, 72), SC = values(N, ACL_FLOAT, 73, true, true);
    for (auto &v : SC) v = as_type(v / 256, ACL_FLOAT);
    std::vector<double> want(static_cast<size_t>(M * N));
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++) acc += A[static_cast<size_t>(i * K + k)] * Bw[static_cast<size_t>(k * N + j)];
            want[static_cast<size_t>(i * N + j)] = as_type(acc * SC[static_cast<size_t>(j)], ACL_BF16);
        }
    /* the 3-D NZ writer with E = 1, seen as [K, N] with storage [N/32, K/16, 16, 32] */
    Dev w3 = nz_weight_i8(Bw, 1, K, N);
    int64_t shp[2] = {K, N}, st[2] = {N, 1}, stor[4] = {(N + 31) / 32, (K + 15) / 16, 16, 32};
    aclTensor *x2 = aclCreateTensor(shp, 2, ACL_INT8, st, 0, ACL_FORMAT_FRACTAL_NZ, stor, 4, w3.mem);
    Dev x1 = make({M, K}, ACL_INT8, A), sc = make({N}, ACL_FLOAT, SC), o = make({M, N}, ACL_BF16, {0}), w2 = make({K, N}, ACL_INT8, Bw);
    RUN(S, aclnnQuantMatmulWeightNz, x1.t, x2, nullptr, sc.t, nullptr, nullptr, nullptr, nullptr, nullptr, false, false, 0, o.t);
    compare("QuantMatmulWeightNz INT8 x2 in FRACTAL_NZ, FLOAT32 scale, BFLOAT16 out", read(o), want, 1e-2);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    expect_code("QuantMatmulWeightNz with an ND x2", aclnnQuantMatmulWeightNzGetWorkspaceSize(x1.t, w2.t, nullptr, sc.t, nullptr, nullptr, nullptr, nullptr, nullptr, false, false, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantMatmulWeightNz groupSize 32", aclnnQuantMatmulWeightNzGetWorkspaceSize(x1.t, x2, nullptr, sc.t, nullptr, nullptr, nullptr, nullptr, nullptr, false, false, 32, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("QuantMatmulWeightNz null x2Scale", aclnnQuantMatmulWeightNzGetWorkspaceSize(x1.t, x2, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, false, false, 0, o.t, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    aclDestroyTensor(x2);
    for (Dev *d : {&w3, &x1, &sc, &o, &w2}) release(*d);
    printf("ok quant matmul weight nz\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    v1();
    v2();
    v3();
    weight_nz();
    finalize_routing();
    grouped_matmul_add();
    quant_matmul_weight_nz();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
