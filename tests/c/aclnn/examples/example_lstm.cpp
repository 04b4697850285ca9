/* aclnnLSTM and aclnnLstmBackward in the reference's example style.
 * - The reference's example: time_step = batch_size = input_size = hidden_size = 1, one layer,
 *   no bias, training, every weight 1, input 1, no hx. All four gates see 1, so
 *   c = sigmoid(1) * tanh(1) = 0.556770 and y = h = sigmoid(1) * tanh(c) = 0.369606.
 * - A 2-layer bidirectional, batch-first LSTM without biases (B 2, T 3, input 3, hidden 2), with
 *   h0/c0, forward in training and then aclnnLstmBackward on the saved i/j/f/o/h/c/tanhc lists:
 *   output, hy, cy, dx, dh0, dc0, the first weight's gradient and the sum of every parameter's
 *   gradient against values CPU torch's nn.LSTM gives for the same weights (hard-coded below;
 *   weights 0.3 cos(0.37 k + 1.1 p) for element k of parameter p, x 0.5 sin(0.7 k + 0.2),
 *   h0 0.1 cos k, c0 0.2 sin k, dy cos(0.3 k), dh 0.1 sin(0.5 k), dc 0.1 cos(0.5 k)).
 * - aclnnGRU, one step of a one-unit GRU with every weight 1, input 1, h0 0.5 and no bias:
 *   r = z = sigmoid(1 + 0.5) = 0.817574, n = tanh(1 + r * 0.5) = 0.887236,
 *   h = (1 - z) n + z h0 = 0.570642.
 * - aclnnThnnFusedLstmCell: gates (input + hidden + both biases) all 0.5 for one unit, cx 1:
 *   i = f = o = sigmoid(0.5) = 0.622459, g = tanh(0.5) = 0.462117, cy = f + i g = 0.91011,
 *   hy = o tanh(cy) = 0.44891 (printed to 5 places).
 * Then argument errors: a NULL input (161001), a weight_hh of the wrong shape, an INT32 input,
 * params of mixed dtypes and a batchSizes (the packed form) with a 3-D input (161002); a GRU with params for two layers but
 * numLayers 1 and a fused cell with 3H gates (161002). */
#include <cmath>
#include "example_common.h"
#include "aclnnop/aclnn_lstm.h"
#include "aclnnop/aclnn_lstm_backward.h"
#include "aclnnop/aclnn_gru.h"
#include "aclnnop/aclnn_thnn_fused_lstm_cell.h"

static aclrtStream stream;
static int failures = 0;

static int Run(aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream), uint64_t ws, aclOpExecutor *ex) {
    void *w = nullptr;
    if (ws > 0) CHECK_RET(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, return 1);
    auto ret = run(w, ws, ex, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("second phase error %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream error %d\n", ret); return ret);
    if (w) aclrtFree(w);
    return 0;
}

/* A device tensor of `shape` holding `data` (zeros when empty). */
struct Dev {
    void *addr = nullptr;
    aclTensor *t = nullptr;
    std::vector<int64_t> shape;
};

static Dev Make(const std::vector<int64_t> &shape, std::vector<float> data = {}, aclDataType dt = ACL_FLOAT) {
    Dev d;
    d.shape = shape;
    if (data.empty()) data.assign(GetShapeSize(shape), 0.0f);
    if (dt == ACL_INT32) {
        std::vector<int32_t> v(data.begin(), data.end());
        CreateAclTensor(v, shape, &d.addr, dt, &d.t);
    } else {
        CreateAclTensor(data, shape, &d.addr, dt, &d.t);
    }
    return d;
}

static std::vector<float> Read(const Dev &d) {
    std::vector<float> v(GetShapeSize(d.shape));
    aclrtMemcpy(v.data(), v.size() * 4, d.addr, v.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    return v;
}

static std::vector<float> Seq(int64_t n, double (*f)(int64_t)) {
    std::vector<float> v(n);
    for (int64_t k = 0; k < n; k++) v[k] = static_cast<float>(f(k));
    return v;
}

static void Compare(const char *what, const std::vector<float> &got, const float *want, size_t n) {
    double worst = 0;
    for (size_t k = 0; k < n; k++) {
        double e = std::fabs(got[k] - want[k]) / (2e-5 + 1e-3 * std::fabs(want[k]));
        if (e > worst) worst = e;
    }
    bool ok = got.size() == n && worst <= 1.0;
    if (!ok) failures++;
    LOG_PRINT("%s %s (worst error %.3f of the tolerance)\n", ok ? "PASS" : "FAIL", what, worst);
}

static aclTensorList *List(const std::vector<Dev> &v) {
    std::vector<aclTensor *> ts;
    for (auto &d : v) ts.push_back(d.t);
    return aclCreateTensorList(ts.data(), ts.size());
}

// CPU torch's nn.LSTM(3, 2, num_layers=2, bidirectional=True, batch_first=True, bias=False)
static const float kY[24] = {0.05253883f, 0.03415911f, -0.0006746752f, 0.0101143f, 0.02030577f, 0.01043351f, -0.01842274f, 0.01944586f, 0.008437063f, -0.01166421f, -0.04215859f, 0.03576784f, -0.02885698f, -0.0319548f, 0.02265249f, 0.007932598f, -0.01131574f, -0.00665821f, 0.02493259f, 0.01564808f, -0.002250899f, -0.007331964f, 0.04418411f, 0.02947184f};
static const float kHy[16] = {-0.008004341f, -0.03716355f, 0.003018835f, -0.04780155f, 0.0107577f, -0.03081401f, 0.0272825f, -0.003283841f, 0.008437063f, -0.01166421f, -0.002250899f, -0.007331964f, -0.0006746752f, 0.0101143f, 0.02265249f, 0.007932598f};
static const float kCy[16] = {-0.01829311f, -0.07148787f, 0.006894078f, -0.09203784f, 0.0251263f, -0.06598089f, 0.06401345f, -0.007093838f, 0.01701881f, -0.02269513f, -0.00452285f, -0.01452353f, -0.00137022f, 0.02029087f, 0.04613999f, 0.01580366f};
static const float kDx[18] = {0.00673194f, 0.01111913f, 0.0140014f, 0.003370241f, 0.006747591f, 0.009211686f, -0.006689702f, 0.002633494f, 0.01160026f, -0.01492091f, -0.001473411f, 0.01217351f, -0.002754149f, 0.01111886f, 0.02348699f, 0.008500427f, 0.01878796f, 0.02653263f};
static const float kDh0[16] = {-0.005040796f, 0.0006806137f, -0.005039973f, -0.001438936f, -0.01466743f, -0.01185937f, 0.003276659f, 0.003305095f, -0.1016202f, -0.1216169f, 0.05999179f, 0.07589212f, -0.006549693f, -0.05371836f, 0.003535452f, 0.06713637f};
static const float kDc0[16] = {0.02612168f, 0.02482392f, 0.01910677f, 0.0148815f, -0.02385433f, -0.02242484f, 0.01179723f, -0.001387974f, 0.2581526f, 0.1961135f, -0.194273f, -0.0989727f, -0.2272542f, -0.2429482f, 0.3078673f, 0.3152946f};
static const float kDparamSums[8] = {-0.03032662f, 0.03219992f, -0.07943937f, 0.002314614f, 0.1003632f, -0.0846312f, 0.1054807f, -0.1037749f};
static const float kDw0[24] = {-0.0006220706f, 0.0006949458f, 0.001685118f, 0.00691093f, 0.008207206f, 0.005643505f, 0.001393895f, 0.0008556388f, -8.503774e-05f, 0.0003225452f, -0.0004874725f, -0.001068224f, -0.006443738f, -0.009663956f, -0.008339065f, -0.006917053f, -0.01445131f, -0.01518889f, -0.0002472462f, -0.0003146219f, -0.0002340261f, 0.002618128f, 0.003171268f, 0.002232911f};

static int DocumentedExample() {
    std::vector<Dev> params = {Make({4, 1}, {1, 1, 1, 1}), Make({4, 1}, {1, 1, 1, 1})};
    Dev input = Make({1, 1, 1}, {1}), output = Make({1, 1, 1}), hy = Make({1, 1, 1}), cy = Make({1, 1, 1});
    std::vector<std::vector<Dev>> lists(7);
    for (auto &l : lists) l.push_back(Make({1, 1, 1}));
    aclTensorList *ls[7];
    for (int q = 0; q < 7; q++) ls[q] = List(lists[q]);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    auto ret = aclnnLSTMGetWorkspaceSize(input.t, List(params), nullptr, nullptr, false, 1, 0.0, true, false, false,
                                         output.t, hy.t, cy.t, ls[0], ls[1], ls[2], ls[3], ls[4], ls[5], ls[6], &ws,
                                         &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnLSTMGetWorkspaceSize error %d\n", ret); return ret);
    CHECK_RET(Run(aclnnLSTM, ws, ex) == 0, return 1);
    LOG_PRINT("result[0] is: %f\n", Read(output)[0]);
    LOG_PRINT("cy[0] is: %f\n", Read(cy)[0]);
    LOG_PRINT("tanhc[0] is: %f\n", Read(lists[6][0])[0]);
    return 0;
}

static double Weight(int64_t p, int64_t k) { return 0.3 * std::cos(0.37 * k + 1.1 * p); }

static int TwoLayerBidirectional() {
    const int64_t L = 2, D = 2, B = 2, T = 3, I = 3, H = 2;
    std::vector<Dev> params;
    for (int64_t l = 0, p = 0; l < L; l++) {
        for (int64_t d = 0; d < D; d++) {
            int64_t in = l == 0 ? I : D * H;
            for (auto shape : {std::vector<int64_t>{4 * H, in}, std::vector<int64_t>{4 * H, H}}) {
                std::vector<float> v(GetShapeSize(shape));
                for (size_t k = 0; k < v.size(); k++) v[k] = static_cast<float>(Weight(p, k));
                params.push_back(Make(shape, v));
                p++;
            }
        }
    }
    Dev x = Make({B, T, I}, Seq(B * T * I, [](int64_t k) { return 0.5 * std::sin(0.7 * k + 0.2); }));
    Dev h0 = Make({L * D, B, H}, Seq(L * D * B * H, [](int64_t k) { return 0.1 * std::cos((double)k); }));
    Dev c0 = Make({L * D, B, H}, Seq(L * D * B * H, [](int64_t k) { return 0.2 * std::sin((double)k); }));
    Dev y = Make({B, T, D * H}), hy = Make({L * D, B, H}), cy = Make({L * D, B, H});
    std::vector<std::vector<Dev>> lists(7);
    for (auto &l : lists)
        for (int64_t k = 0; k < L * D; k++) l.push_back(Make({T, B, H}));
    aclTensorList *ls[7];
    for (int q = 0; q < 7; q++) ls[q] = List(lists[q]);
    aclTensorList *ps = List(params), *hx = List({h0, c0});
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    auto ret = aclnnLSTMGetWorkspaceSize(x.t, ps, hx, nullptr, false, L, 0.0, true, true, true, y.t, hy.t, cy.t, ls[0],
                                         ls[1], ls[2], ls[3], ls[4], ls[5], ls[6], &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnLSTMGetWorkspaceSize error %d\n", ret); return ret);
    CHECK_RET(Run(aclnnLSTM, ws, ex) == 0, return 1);
    Compare("two-layer bidirectional output", Read(y), kY, 24);
    Compare("two-layer bidirectional hy", Read(hy), kHy, 16);
    Compare("two-layer bidirectional cy", Read(cy), kCy, 16);

    Dev dy = Make({B, T, D * H}, Seq(B * T * D * H, [](int64_t k) { return std::cos(0.3 * k); }));
    Dev dh = Make({L * D, B, H}, Seq(L * D * B * H, [](int64_t k) { return 0.1 * std::sin(0.5 * k); }));
    Dev dc = Make({L * D, B, H}, Seq(L * D * B * H, [](int64_t k) { return 0.1 * std::cos(0.5 * k); }));
    Dev dx = Make({B, T, I}), dh0 = Make({L * D, B, H}), dc0 = Make({L * D, B, H});
    std::vector<Dev> dparams;
    for (auto &p : params) dparams.push_back(Make(p.shape));
    ret = aclnnLstmBackwardGetWorkspaceSize(x.t, hx, ps, dy.t, dh.t, dc.t, ls[0], ls[1], ls[2], ls[3], ls[4], ls[5],
                                            ls[6], nullptr, false, L, 0.0, true, true, true, nullptr, dx.t, dh0.t,
                                            dc0.t, List(dparams), &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnLstmBackwardGetWorkspaceSize error %d\n", ret); return ret);
    CHECK_RET(Run(aclnnLstmBackward, ws, ex) == 0, return 1);
    Compare("two-layer bidirectional dx", Read(dx), kDx, 18);
    Compare("two-layer bidirectional dh0", Read(dh0), kDh0, 16);
    Compare("two-layer bidirectional dc0", Read(dc0), kDc0, 16);
    Compare("two-layer bidirectional dweight_ih_l0", Read(dparams[0]), kDw0, 24);
    std::vector<float> sums;
    for (auto &d : dparams) {
        double s = 0;
        for (float v : Read(d)) s += v;
        sums.push_back(static_cast<float>(s));
    }
    Compare("two-layer bidirectional dparams sums", sums, kDparamSums, 8);
    return 0;
}

/* The first phase of a one-layer LSTM on input [3, 2, 4], hidden 5, with biases, in inference:
 * `mutate` spoils one argument; prints the status under `what`. */
static void Error(const char *what, int which) {
    Dev x = Make({3, 2, 4}), xi = Make({3, 2, 4}, {}, ACL_INT32);
    Dev wih = Make({20, 4}), whh = Make({20, 5}), bih = Make({20}), bhh = Make({20});
    Dev badwhh = Make({20, 4}), f16 = Make({20, 5}, {}, ACL_FLOAT16);
    Dev y = Make({3, 2, 5}), hy = Make({1, 2, 5}), cy = Make({1, 2, 5});
    Dev bs = Make({3}, {2, 2, 2}, ACL_INT32);
    std::vector<Dev> ps = {wih, which == 1 ? badwhh : which == 3 ? f16 : whh, bih, bhh};
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    auto ret = aclnnLSTMGetWorkspaceSize(which == 0 ? nullptr : which == 2 ? xi.t : x.t, List(ps), nullptr,
                                         which == 4 ? bs.t : nullptr, true, 1, 0.0, false, false, false, y.t, hy.t,
                                         cy.t, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &ws, &ex);
    LOG_PRINT("%s: %d\n", what, ret);
}

static int GruAndFusedCell() {
    std::vector<Dev> params = {Make({3, 1}, {1, 1, 1}), Make({3, 1}, {1, 1, 1})};
    Dev x = Make({1, 1, 1}, {1}), h0 = Make({1, 1, 1}, {0.5}), y = Make({1, 1, 1}), hy = Make({1, 1, 1});
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    auto ret = aclnnGRUGetWorkspaceSize(x.t, List(params), h0.t, nullptr, false, 1, 0.0, false, false, false, y.t, hy.t,
                                        nullptr, nullptr, nullptr, nullptr, nullptr, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnGRUGetWorkspaceSize error %d\n", ret); return ret);
    CHECK_RET(Run(aclnnGRU, ws, ex) == 0, return 1);
    LOG_PRINT("gru result[0] is: %f\n", Read(y)[0]);
    std::vector<Dev> two = {params[0], params[1], Make({3, 1}), Make({3, 1})};
    ret = aclnnGRUGetWorkspaceSize(x.t, List(two), h0.t, nullptr, false, 1, 0.0, false, false, false, y.t, hy.t,
                                   nullptr, nullptr, nullptr, nullptr, nullptr, &ws, &ex);
    LOG_PRINT("gru params for two layers: %d\n", ret);

    Dev ig = Make({1, 4}, {0.125, 0.125, 0.125, 0.125}), hg = Make({1, 4}, {0.125, 0.125, 0.125, 0.125});
    Dev bi = Make({4}, {0.125, 0.125, 0.125, 0.125}), bh = Make({4}, {0.125, 0.125, 0.125, 0.125});
    Dev cx = Make({1, 1}, {1}), hyc = Make({1, 1}), cyc = Make({1, 1}), st = Make({1, 4});
    ret = aclnnThnnFusedLstmCellGetWorkspaceSize(ig.t, hg.t, cx.t, bi.t, bh.t, hyc.t, cyc.t, st.t, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnThnnFusedLstmCellGetWorkspaceSize error %d\n", ret); return ret);
    CHECK_RET(Run(aclnnThnnFusedLstmCell, ws, ex) == 0, return 1);
    LOG_PRINT("fused cell hy is: %.5f, cy is: %.5f\n", Read(hyc)[0], Read(cyc)[0]);
    Dev g3 = Make({1, 3});
    ret = aclnnThnnFusedLstmCellGetWorkspaceSize(g3.t, g3.t, cx.t, nullptr, nullptr, hyc.t, cyc.t, st.t, &ws, &ex);
    LOG_PRINT("fused cell 3H gates: %d\n", ret);
    return 0;
}

int main() {
    int32_t deviceId = 0;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl error %d\n", ret); return ret);
    CHECK_RET(DocumentedExample() == 0, return 1);
    CHECK_RET(TwoLayerBidirectional() == 0, return 1);
    CHECK_RET(GruAndFusedCell() == 0, return 1);
    Error("null input", 0);
    Error("wrong weight_hh shape", 1);
    Error("int32 input", 2);
    Error("float16 weight_hh with float input", 3);
    Error("packed batchSizes with a 3-D input", 4);
    LOG_PRINT("lstm example: %d mismatches\n", failures);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return failures == 0 ? 0 : 1;
}
