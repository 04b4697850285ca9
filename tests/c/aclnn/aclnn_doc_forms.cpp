/* Forms the current aclnn operator reference uses that CANN 8.1's headers and checks did not
 * take: ConvTbc (+Backward) and ConvDepthwise2d (declared in CANN 8.1's convolution headers), the newer
 * headers that declare a sibling's functions (aclnn_logsigmoid.h: LogSigmoidForward,
 * aclnn_scatter.h: ScatterValue, aclnn_max_pool2d_with_indices.h: MaxPool2dWithMask,
 * aclnn_pad2d_backward.h: both 2-D pad gradients), RmsNormGrad with rstd given as a prefix of
 * x's shape, RotaryPositionEmbeddingGrad without x (dcos/dsin not computed, passed empty), and
 * QuantMatmulV3 with x2 converted to FRACTAL_NZ by aclnnTransMatmulWeight, and the fake
 * quantisation of quantisation-aware training (FakeQuantPerTensor/PerChannelAffineCachemask). Each result is
 * checked against a host reference; the argument errors against their documented codes. */
#include <cmath>
#include <cstring>
#include "ops_ref.h"
#include "aclnnop/aclnn_convolution.h"
#include "aclnnop/aclnn_convolution_backward.h"
#include "aclnnop/aclnn_logsigmoid.h"
#include "aclnnop/aclnn_scatter.h"
#include "aclnnop/aclnn_max_pool2d_with_indices.h"
#include "aclnnop/aclnn_max_pool2d_with_indices_backward.h"
#include "aclnnop/aclnn_pad2d_backward.h"
#include "aclnnop/aclnn_rms_norm_grad.h"
#include "aclnnop/aclnn_rotary_position_embedding_grad.h"
#include "aclnnop/aclnn_quant_matmul_v3.h"
#include "aclnnop/aclnn_trans_matmul_weight.h"
#include "aclnnop/aclnn_fake_quant_per_tensor_affine_cachemask.h"
#include "aclnnop/aclnn_fake_quant_per_channel_affine_cachemask.h"

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

/* ---- ConvTbc: self (T, B, Cin), weight (K, Cin, Cout), bias (Cout), pad ---- */
static void conv_tbc() {
    const int64_t T = 5, B = 2, Ci = 3, K = 3, Co = 4, P = 1, To = T + 2 * P - K + 1;
    std::vector<double> X = values(T * B * Ci, ACL_FLOAT, 11), W = values(K * Ci * Co, ACL_FLOAT, 12),
                        Bi = values(Co, ACL_FLOAT, 13);
    std::vector<double> want(static_cast<size_t>(To * B * Co));
    for (int64_t t = 0; t < To; t++)
        for (int64_t b = 0; b < B; b++)
            for (int64_t o = 0; o < Co; o++) {
                double acc = Bi[static_cast<size_t>(o)];
                for (int64_t k = 0; k < K; k++) {
                    int64_t ti = t + k - P;
                    if (ti < 0 || ti >= T) continue;
                    for (int64_t c = 0; c < Ci; c++)
                        acc += X[static_cast<size_t>((ti * B + b) * Ci + c)] * W[static_cast<size_t>((k * Ci + c) * Co + o)];
                }
                want[static_cast<size_t>((t * B + b) * Co + o)] = acc;
            }
    for (Layout l : {CONTIG, STRIDED}) {
        Dev x = make({T, B, Ci}, ACL_FLOAT, X, l), w = make({K, Ci, Co}, ACL_FLOAT, W), bi = make({Co}, ACL_FLOAT, Bi),
            o = make({To, B, Co}, ACL_FLOAT, {0});
        RUN(S, aclnnConvTbc, x.t, w.t, bi.t, P, o.t, 0);
        compare(l == CONTIG ? "ConvTbc" : "ConvTbc of a strided self", read(o), want, 1e-5);
        for (Dev *d : {&x, &w, &bi, &o}) release(*d);
    }
    /* ConvTbcBackward: the three gradients from gy (To, B, Co) */
    {
        std::vector<double> GY = values(To * B * Co, ACL_FLOAT, 14), gx(static_cast<size_t>(T * B * Ci), 0),
                            gw(static_cast<size_t>(K * Ci * Co), 0), gb(static_cast<size_t>(Co), 0);
        for (int64_t t = 0; t < To; t++)
            for (int64_t b = 0; b < B; b++)
                for (int64_t o = 0; o < Co; o++) {
                    double g = GY[static_cast<size_t>((t * B + b) * Co + o)];
                    gb[static_cast<size_t>(o)] += g;
                    for (int64_t k = 0; k < K; k++) {
                        int64_t ti = t + k - P;
                        if (ti < 0 || ti >= T) continue;
                        for (int64_t c = 0; c < Ci; c++) {
                            gx[static_cast<size_t>((ti * B + b) * Ci + c)] += g * W[static_cast<size_t>((k * Ci + c) * Co + o)];
                            gw[static_cast<size_t>((k * Ci + c) * Co + o)] += g * X[static_cast<size_t>((ti * B + b) * Ci + c)];
                        }
                    }
                }
        Dev gy = make({To, B, Co}, ACL_FLOAT, GY), x = make({T, B, Ci}, ACL_FLOAT, X), w = make({K, Ci, Co}, ACL_FLOAT, W),
            bi = make({Co}, ACL_FLOAT, Bi), ogx = make({T, B, Ci}, ACL_FLOAT, {0}), ogw = make({K, Ci, Co}, ACL_FLOAT, {0}),
            ogb = make({Co}, ACL_FLOAT, {0});
        RUN(S, aclnnConvTbcBackward, gy.t, x.t, w.t, bi.t, P, 0, ogx.t, ogw.t, ogb.t);
        compare("ConvTbcBackward gradInput", read(ogx), gx, 1e-5);
        compare("ConvTbcBackward gradWeight", read(ogw), gw, 1e-5);
        compare("ConvTbcBackward gradBias", read(ogb), gb, 1e-5);
        for (Dev *d : {&gy, &x, &w, &bi, &ogx, &ogw, &ogb}) release(*d);
    }
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev x = make({T, B, Ci}, ACL_FLOAT, X), w = make({K, Ci, Co}, ACL_FLOAT, W), bi = make({Co}, ACL_FLOAT, Bi),
        o = make({To, B, Co}, ACL_FLOAT, {0}), wbad = make({K, Ci + 1, Co}, ACL_FLOAT, {0}), obad = make({To + 1, B, Co}, ACL_FLOAT, {0});
    expect_code("ConvTbc null bias", aclnnConvTbcGetWorkspaceSize(x.t, w.t, nullptr, P, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_NULLPTR);
    expect_code("ConvTbc weight Cin differs", aclnnConvTbcGetWorkspaceSize(x.t, wbad.t, bi.t, P, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ConvTbc wrong out length", aclnnConvTbcGetWorkspaceSize(x.t, w.t, bi.t, P, obad.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    expect_code("ConvTbc pad 256", aclnnConvTbcGetWorkspaceSize(x.t, w.t, bi.t, 256, o.t, 0, &ws, &ex), ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&x, &w, &bi, &o, &wbad, &obad}) release(*d);
    printf("ok conv tbc\n");
}

/* ---- ConvDepthwise2d: weight (Cin*m, 1, KH, KW), groups = Cin ---- */
static void conv_depthwise() {
    const int64_t N = 2, C = 3, H = 5, Wd = 4, M = 2, KH = 3, KW = 2, SH = 2, SW = 1, PH = 1, PW = 0, DH = 1, DW = 2;
    const int64_t Co = C * M, Ho = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1, Wo = (Wd + 2 * PW - DW * (KW - 1) - 1) / SW + 1;
    std::vector<double> X = values(N * C * H * Wd, ACL_FLOAT, 21), W = values(Co * KH * KW, ACL_FLOAT, 22),
                        Bi = values(Co, ACL_FLOAT, 23);
    std::vector<double> want(static_cast<size_t>(N * Co * Ho * Wo));
    for (int64_t n = 0; n < N; n++)
        for (int64_t o = 0; o < Co; o++)
            for (int64_t i = 0; i < Ho; i++)
                for (int64_t j = 0; j < Wo; j++) {
                    double acc = Bi[static_cast<size_t>(o)];
                    int64_t c = o / M;
                    for (int64_t a = 0; a < KH; a++)
                        for (int64_t b = 0; b < KW; b++) {
                            int64_t y = i * SH - PH + a * DH, x = j * SW - PW + b * DW;
                            if (y < 0 || y >= H || x < 0 || x >= Wd) continue;
                            acc += X[static_cast<size_t>(((n * C + c) * H + y) * Wd + x)] * W[static_cast<size_t>((o * KH + a) * KW + b)];
                        }
                    want[static_cast<size_t>(((n * Co + o) * Ho + i) * Wo + j)] = acc;
                }
    int64_t ks[2] = {KH, KW}, st[2] = {SH, SW}, pd[2] = {PH, PW}, dl[2] = {DH, DW};
    aclIntArray *k = aclCreateIntArray(ks, 2), *s = aclCreateIntArray(st, 2), *p = aclCreateIntArray(pd, 2),
                *d = aclCreateIntArray(dl, 2);
    Dev x = make({N, C, H, Wd}, ACL_FLOAT, X), w = make({Co, 1, KH, KW}, ACL_FLOAT, W), bi = make({Co}, ACL_FLOAT, Bi),
        o = make({N, Co, Ho, Wo}, ACL_FLOAT, {0});
    RUN(S, aclnnConvDepthwise2d, x.t, w.t, k, bi.t, s, p, d, o.t, 0);
    compare("ConvDepthwise2d (multiplier 2, stride, padding, dilation)", read(o), want, 1e-5);
    /* without bias */
    std::vector<double> nobias(want);
    for (size_t e = 0; e < nobias.size(); e++) nobias[e] -= Bi[(e / static_cast<size_t>(Ho * Wo)) % static_cast<size_t>(Co)];
    RUN(S, aclnnConvDepthwise2d, x.t, w.t, k, nullptr, s, p, d, o.t, 0);
    compare("ConvDepthwise2d without bias", read(o), nobias, 1e-5);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    int64_t ks2[2] = {KH, KW + 1};
    aclIntArray *kbad = aclCreateIntArray(ks2, 2);
    Dev wbad = make({Co + 1, 1, KH, KW}, ACL_FLOAT, {0});
    expect_code("ConvDepthwise2d kernelSize not weight's", aclnnConvDepthwise2dGetWorkspaceSize(x.t, w.t, kbad, bi.t, s, p, d, o.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ConvDepthwise2d Cout not a multiple of Cin", aclnnConvDepthwise2dGetWorkspaceSize(x.t, wbad.t, k, nullptr, s, p, d, o.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("ConvDepthwise2d null self", aclnnConvDepthwise2dGetWorkspaceSize(nullptr, w.t, k, bi.t, s, p, d, o.t, 0, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (aclIntArray *a : {k, s, p, d, kbad}) aclDestroyIntArray(a);
    for (Dev *e : {&x, &w, &bi, &o, &wbad}) release(*e);
    printf("ok conv depthwise\n");
}

/* ---- functions the newer headers declare together (this file compiling is half the check) ---- */
static void sibling_headers() {
    Dev x = make({4}, ACL_FLOAT, {-1, 0, 1, 2}), o = make({4}, ACL_FLOAT, {0}), buf = make({0}, ACL_FLOAT, {});
    RUN(S, aclnnLogSigmoidForward, x.t, o.t, buf.t);
    std::vector<double> want;
    for (double v : {-1.0, 0.0, 1.0, 2.0}) want.push_back(-std::log1p(std::exp(-v)));
    compare("LogSigmoidForward through aclnn_logsigmoid.h", read(o), want, 1e-6);
    Dev s = make({2, 3}, ACL_FLOAT, {0, 0, 0, 0, 0, 0}), idx = make({2, 1}, ACL_INT64, {2, 0}), so = make({2, 3}, ACL_FLOAT, {0});
    float v = 5;
    aclScalar *val = aclCreateScalar(&v, ACL_FLOAT);
    RUN(S, aclnnScatterValue, s.t, 1, idx.t, val, 0, so.t);
    compare("ScatterValue through aclnn_scatter.h", read(so), {0, 0, 5, 5, 0, 0}, 0);
    aclDestroyScalar(val);
    for (Dev *d : {&x, &o, &buf, &s, &idx, &so}) release(*d);
    /* the declarations are there (the types match CANN's) */
    auto mp = &aclnnMaxPool2dWithMaskGetWorkspaceSize;
    auto mpb = &aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize;
    auto rp = &aclnnReflectionPad2dBackwardGetWorkspaceSize;
    auto pp = &aclnnReplicationPad2dBackwardGetWorkspaceSize;
    g_checks++;
    if (!mp || !mpb || !rp || !pp) g_fail++;
    printf("ok sibling headers\n");
}

/* ---- RmsNormGrad with rstd = x_shape[0:1] ([2] for x [2, 1, 8]) ---- */
static void rms_norm_grad_prefix() {
    const int64_t R = 2, D = 8;
    std::vector<double> X = values(R * D, ACL_FLOAT, 31), G = values(D, ACL_FLOAT, 32, true), DY = values(R * D, ACL_FLOAT, 33);
    std::vector<double> rstd(R), dx(static_cast<size_t>(R * D)), dg(D, 0);
    for (int64_t r = 0; r < R; r++) {
        double ss = 0;
        for (int64_t j = 0; j < D; j++) ss += X[static_cast<size_t>(r * D + j)] * X[static_cast<size_t>(r * D + j)];
        rstd[static_cast<size_t>(r)] = as_type(1.0 / std::sqrt(ss / D + 1e-6), ACL_FLOAT);
    }
    for (int64_t r = 0; r < R; r++) {
        double rs = rstd[static_cast<size_t>(r)], m = 0;
        for (int64_t j = 0; j < D; j++) {
            size_t e = static_cast<size_t>(r * D + j);
            m += DY[e] * G[static_cast<size_t>(j)] * X[e];
            dg[static_cast<size_t>(j)] += DY[e] * X[e] * rs;
        }
        m /= D;
        for (int64_t j = 0; j < D; j++) {
            size_t e = static_cast<size_t>(r * D + j);
            dx[e] = rs * (DY[e] * G[static_cast<size_t>(j)] - X[e] * rs * rs * m);
        }
    }
    Dev dy = make({R, 1, D}, ACL_FLOAT, DY), x = make({R, 1, D}, ACL_FLOAT, X), rs = make({R}, ACL_FLOAT, rstd),
        g = make({D}, ACL_FLOAT, G), dxo = make({R, 1, D}, ACL_FLOAT, {0}), dgo = make({D}, ACL_FLOAT, {0});
    RUN(S, aclnnRmsNormGrad, dy.t, x.t, rs.t, g.t, dxo.t, dgo.t);
    compare("RmsNormGrad dx with rstd [2] for x [2, 1, 8]", read(dxo), dx, 1e-5);
    compare("RmsNormGrad dgamma with rstd [2]", read(dgo), dg, 1e-5);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev rbad = make({R + 1}, ACL_FLOAT, {0});
    expect_code("RmsNormGrad rstd of 3 rows for 2", aclnnRmsNormGradGetWorkspaceSize(dy.t, x.t, rbad.t, g.t, dxo.t, dgo.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    for (Dev *d : {&dy, &x, &rs, &g, &dxo, &dgo, &rbad}) release(*d);
    printf("ok rms norm grad\n");
}

/* ---- RotaryPositionEmbeddingGrad without x: dx only; dcos/dsin passed empty, untouched ---- */
static void rope_grad_without_x() {
    const int64_t D = 8;
    std::vector<double> DY = values(D, ACL_FLOAT, 41), C = values(D, ACL_FLOAT, 42), SN = values(D, ACL_FLOAT, 43);
    /* mode 0 (half): y = x*cos + rotate_half(x)*sin, rotate_half(x) = cat(-x2, x1); so
       dx = dy*cos + rotate_half^T(dy*sin), rotate_half^T(g) = cat(g2, -g1) */
    std::vector<double> want(D);
    for (int64_t i = 0; i < D; i++) {
        size_t e = static_cast<size_t>(i), h = static_cast<size_t>(D / 2);
        double gs = i < D / 2 ? DY[e + h] * SN[e + h] : -DY[e - h] * SN[e - h];
        want[e] = DY[e] * C[e] + gs;
    }
    Dev dy = make({1, 1, 1, D}, ACL_FLOAT, DY), c = make({1, 1, 1, D}, ACL_FLOAT, C), s = make({1, 1, 1, D}, ACL_FLOAT, SN),
        dx = make({1, 1, 1, D}, ACL_FLOAT, {0}), dc = make({1, 1, 1, 0}, ACL_FLOAT, {}), ds = make({1, 1, 1, 0}, ACL_FLOAT, {});
    RUN(S, aclnnRotaryPositionEmbeddingGrad, dy.t, c.t, s.t, nullptr, 0, dx.t, dc.t, ds.t);
    compare("RotaryPositionEmbeddingGrad dx without x (empty dcos/dsin)", read(dx), want, 1e-6);
    for (Dev *d : {&dy, &c, &s, &dx, &dc, &ds}) release(*d);
    printf("ok rope grad\n");
}

/* ---- QuantMatmulV3 with x2 in FRACTAL_NZ (aclnnTransMatmulWeight in place) ---- */
static void quant_matmul_nz() {
    const int64_t M = 3, K = 40, N = 20;
    std::vector<double> A(static_cast<size_t>(M * K)), Bw(static_cast<size_t>(K * N)), SC(N);
    for (size_t i = 0; i < A.size(); i++) A[i] = static_cast<double>(static_cast<int>(i * 7 % 11) - 5);
    for (size_t i = 0; i < Bw.size(); i++) Bw[i] = static_cast<double>(static_cast<int>(i * 5 % 13) - 6);
    for (int64_t j = 0; j < N; j++) SC[static_cast<size_t>(j)] = 0.25 + 0.125 * static_cast<double>(j % 3);
    std::vector<double> want(static_cast<size_t>(M * N));
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = 0;
            for (int64_t k = 0; k < K; k++) acc += A[static_cast<size_t>(i * K + k)] * Bw[static_cast<size_t>(k * N + j)];
            want[static_cast<size_t>(i * N + j)] = as_type(acc * SC[static_cast<size_t>(j)], ACL_BF16);
        }
    /* x2 in memory large enough for its NZ form (aclnnCalculateMatmulWeightSizeV2) */
    int64_t shp[2] = {K, N};
    aclIntArray *sa = aclCreateIntArray(shp, 2);
    uint64_t elems = 0;
    NN(aclnnCalculateMatmulWeightSizeV2(sa, ACL_INT8, &elems));
    aclDestroyIntArray(sa);
    std::vector<int8_t> host(static_cast<size_t>(elems), 0);
    for (size_t i = 0; i < Bw.size(); i++) host[i] = static_cast<int8_t>(Bw[i]);
    void *wmem = nullptr;
    CHECK(aclrtMalloc(&wmem, elems, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(wmem, elems, host.data(), elems, ACL_MEMCPY_HOST_TO_DEVICE));
    int64_t st[2] = {N, 1}, stor[1] = {static_cast<int64_t>(elems)};
    aclTensor *x2 = aclCreateTensor(shp, 2, ACL_INT8, st, 0, ACL_FORMAT_ND, stor, 1, wmem);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    NN(aclnnTransMatmulWeightGetWorkspaceSize(x2, &ws, &ex));
    void *w = nullptr;
    if (ws > 0) CHECK(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST));
    NN(aclnnTransMatmulWeight(w, ws, ex, S));
    CHECK(aclrtSynchronizeStream(S));
    if (w) aclrtFree(w);
    Dev x1 = make({M, K}, ACL_INT8, A), sc = make({N}, ACL_FLOAT, SC), o = make({M, N}, ACL_BF16, {0});
    RUN(S, aclnnQuantMatmulV3, x1.t, x2, sc.t, nullptr, nullptr, false, false, o.t);
    compare("QuantMatmulV3 with x2 in FRACTAL_NZ (BF16 out)", read(o), want, 1e-2);
    aclDestroyTensor(x2);
    aclrtFree(wmem);
    for (Dev *d : {&x1, &sc, &o}) release(*d);
    printf("ok quant matmul nz\n");
}

/* ---- FakeQuantPerTensor/PerChannelAffineCachemask (the reference's formula) ---- */
static void fake_quant() {
    /* scale 0.1, zero point 2, range [0, 20]: 0.26 -> 3 + 2 -> 0.3; -1 -> -8, clamped to 0 ->
       -0.2 (outside); 3 -> 32, clamped to 20 -> 1.8 (outside); 0.05 -> 0.5, to even 0 -> 0 */
    Dev x = make({4}, ACL_FLOAT, {0.26, -1, 3, 0.05}), sc = make({1}, ACL_FLOAT, {0.1}), zp = make({1}, ACL_INT32, {2}),
        o = make({4}, ACL_FLOAT, {0}), m = make({4}, ACL_BOOL, {0});
    RUN(S, aclnnFakeQuantPerTensorAffineCachemask, x.t, sc.t, zp.t, 1.0f, 0, 20, o.t, m.t);
    compare("FakeQuantPerTensorAffineCachemask out", read(o), {0.3, -0.2, 1.8, 0}, 1e-6);
    compare("FakeQuantPerTensorAffineCachemask mask", read(m), {1, 0, 0, 1}, 0);
    RUN(S, aclnnFakeQuantPerTensorAffineCachemask, x.t, sc.t, zp.t, 0.5f, 0, 20, o.t, m.t);
    compare("FakeQuantPerTensorAffineCachemask disabled: out is self", read(o), read(x), 0);
    compare("FakeQuantPerTensorAffineCachemask disabled: mask all true", read(m), {1, 1, 1, 1}, 0);
    /* per channel along axis 1 of [2, 2]: channel 0 scale 0.5 zp 0, channel 1 scale 0.25 zp 1, range [-4, 4] */
    Dev x2 = make({2, 2}, ACL_FLOAT, {0.74, 0.3, -3, 2}), s2 = make({2}, ACL_FLOAT, {0.5, 0.25}), z2 = make({2}, ACL_INT32, {0, 1}),
        o2 = make({2, 2}, ACL_FLOAT, {0}), m2 = make({2, 2}, ACL_BOOL, {0});
    RUN(S, aclnnFakeQuantPerChannelAffineCachemask, x2.t, s2.t, z2.t, 1, -4, 4, o2.t, m2.t);
    /* 0.74/0.5 = 1.48 -> 1 -> 0.5; 0.3/0.25 = 1.2 -> 1 + 1 = 2 -> 0.25; -3/0.5 = -6 -> -4 -> -2 (outside);
       2/0.25 = 8 + 1 = 9 -> 4 -> 0.75 (outside) */
    compare("FakeQuantPerChannelAffineCachemask out", read(o2), {0.5, 0.25, -2, 0.75}, 1e-6);
    compare("FakeQuantPerChannelAffineCachemask mask", read(m2), {1, 1, 0, 0}, 0);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    Dev s3 = make({3}, ACL_FLOAT, {1, 1, 1});
    expect_code("FakeQuantPerTensor quantMin > quantMax", aclnnFakeQuantPerTensorAffineCachemaskGetWorkspaceSize(x.t, sc.t, zp.t, 1.0f, 5, 4, o.t, m.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FakeQuantPerTensor scale of 3 values", aclnnFakeQuantPerTensorAffineCachemaskGetWorkspaceSize(x.t, s3.t, zp.t, 1.0f, 0, 4, o.t, m.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FakeQuantPerChannel scale not matching the axis", aclnnFakeQuantPerChannelAffineCachemaskGetWorkspaceSize(x2.t, s3.t, z2.t, 1, -4, 4, o2.t, m2.t, &ws, &ex),
                ACLNN_ERR_PARAM_INVALID);
    expect_code("FakeQuantPerChannel null mask", aclnnFakeQuantPerChannelAffineCachemaskGetWorkspaceSize(x2.t, s2.t, z2.t, 1, -4, 4, o2.t, nullptr, &ws, &ex),
                ACLNN_ERR_PARAM_NULLPTR);
    for (Dev *d : {&x, &sc, &zp, &o, &m, &x2, &s2, &z2, &o2, &m2, &s3}) release(*d);
    printf("ok fake quant\n");
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    conv_tbc();
    conv_depthwise();
    sibling_headers();
    rms_norm_grad_prefix();
    rope_grad_without_x();
    quant_matmul_nz();
    fake_quant();
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
