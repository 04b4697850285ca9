/* A training loop made of the calls PyTorch's NPU plugin makes for a small MLP (torch_npu.md
 * §4): Linear = Addmm(bias, x, W^T as a transposed view), ReLU, MSE loss, their backward
 * forms (MseLossBackward, Mm with transposed views, ReduceSum for the bias gradient,
 * ThresholdBackward), then SGD through ForeachAddListV2 — 60 steps on one stream with no
 * synchronisation inside a step. The first step is checked against a host reference
 * (tolerance 1e-5 relative: float32 products in another order), and the loss must fall
 * below a tenth of its first value. */
#include "ops_ref.h"
#include "aclnnop/aclnn_addmm.h"
#include "aclnnop/aclnn_mm.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "aclnnop/aclnn_mse_loss.h"
#include "aclnnop/aclnn_mse_loss_backward.h"
#include "aclnnop/aclnn_reduce_sum.h"
#include "aclnnop/aclnn_ones.h"
#include "aclnnop/aclnn_foreach_add_list_v2.h"

static aclrtStream S;

/* Launch without synchronising (the stream orders everything). */
#define GO(op, ...)                                                                \
    do {                                                                           \
        uint64_t ws_ = 0;                                                          \
        aclOpExecutor *ex_ = nullptr;                                              \
        NN(op##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_));                         \
        NN(op(nullptr, ws_, ex_, S));                                              \
    } while (0)

/* A transposed view [c, r] of a contiguous [r, c] tensor's memory. */
static aclTensor *transposed(void *mem, int64_t r, int64_t c) {
    int64_t shape[] = {c, r}, st[] = {1, c}, storage[] = {r * c};
    return aclCreateTensor(shape, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, storage, 1, mem);
}

int main() {
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&S));
    const int B = 16, I = 8, H = 16, O = 4;
    /* data: y = sin-ish function of x */
    std::vector<double> xv(B * I), yv(B * O);
    for (int i = 0; i < B * I; i++) xv[static_cast<size_t>(i)] = static_cast<float>(std::sin(0.37 * i) * 0.8);
    for (int b = 0; b < B; b++)
        for (int o = 0; o < O; o++) {
            double s = 0;
            for (int i = 0; i < I; i++) s += xv[static_cast<size_t>(b * I + i)] * ((i + o) % 3 - 1) * 0.5;
            yv[static_cast<size_t>(b * O + o)] = static_cast<float>(s);
        }
    auto w1v = values(H * I, ACL_FLOAT, 1), w2v = values(O * H, ACL_FLOAT, 2), b1v = values(H, ACL_FLOAT, 3), b2v = values(O, ACL_FLOAT, 4);
    for (auto *v : {&w1v, &w2v, &b1v, &b2v})
        for (auto &e : *v) e = static_cast<float>(e * 0.05);
    Dev x = make({B, I}, ACL_FLOAT, xv), y = make({B, O}, ACL_FLOAT, yv);
    Dev w1 = make({H, I}, ACL_FLOAT, w1v), b1 = make({H}, ACL_FLOAT, b1v), w2 = make({O, H}, ACL_FLOAT, w2v), b2 = make({O}, ACL_FLOAT, b2v);
    Dev h = make({B, H}, ACL_FLOAT, {}), a = make({B, H}, ACL_FLOAT, {}), p = make({B, O}, ACL_FLOAT, {}), loss = make({}, ACL_FLOAT, {});
    Dev gl = make({}, ACL_FLOAT, {}), gp = make({B, O}, ACL_FLOAT, {}), gw2 = make({O, H}, ACL_FLOAT, {}), gb2 = make({O}, ACL_FLOAT, {});
    Dev ga = make({B, H}, ACL_FLOAT, {}), gh = make({B, H}, ACL_FLOAT, {}), gw1 = make({H, I}, ACL_FLOAT, {}), gb1 = make({H}, ACL_FLOAT, {});
    aclTensor *w1t = transposed(w1.mem, H, I), *w2t = transposed(w2.mem, O, H);
    aclTensor *gpt = transposed(gp.mem, B, O), *ght = transposed(gh.mem, B, H);
    float one = 1, zero = 0, lr = -0.2f;
    aclScalar *s1 = aclCreateScalar(&one, ACL_FLOAT), *s0 = aclCreateScalar(&zero, ACL_FLOAT), *slr = aclCreateScalar(&lr, ACL_FLOAT);
    int64_t d0 = 0;
    aclIntArray *dim0 = aclCreateIntArray(&d0, 1);
    /* parameter and gradient lists for the optimizer (separate handles over the same memory:
       a list owns its tensors) */
    auto again = [](const Dev &d) {
        int64_t st[8];
        for (size_t k = 0; k < d.shape.size(); k++) st[k] = d.strides[k];
        int64_t storage = numel(d.shape);
        return static_cast<const aclTensor *>(aclCreateTensor(d.shape.data(), d.shape.size(), ACL_FLOAT, st, 0, ACL_FORMAT_ND, &storage, 1, d.mem));
    };
    const aclTensor *ps[] = {again(w1), again(b1), again(w2), again(b2)};
    const aclTensor *gs[] = {again(gw1), again(gb1), again(gw2), again(gb2)};
    aclTensorList *params = aclCreateTensorList(ps, 4), *grads = aclCreateTensorList(gs, 4);
    double first = 0, last = 0;
    for (int step = 0; step < 60; step++) {
        /* forward */
        GO(aclnnAddmm, b1.t, x.t, w1t, s1, s1, h.t, 1);
        GO(aclnnRelu, h.t, a.t);
        GO(aclnnAddmm, b2.t, a.t, w2t, s1, s1, p.t, 1);
        GO(aclnnMseLoss, p.t, y.t, 1, loss.t);
        /* backward */
        GO(aclnnInplaceOne, gl.t);
        GO(aclnnMseLossBackward, gl.t, p.t, y.t, 1, gp.t);
        GO(aclnnMm, gpt, a.t, gw2.t, 1);
        GO(aclnnReduceSum, gp.t, dim0, false, ACL_FLOAT, gb2.t);
        GO(aclnnMm, gp.t, w2.t, ga.t, 1);
        GO(aclnnThresholdBackward, ga.t, h.t, s0, gh.t);
        GO(aclnnMm, ght, x.t, gw1.t, 1);
        GO(aclnnReduceSum, gh.t, dim0, false, ACL_FLOAT, gb1.t);
        if (step == 0) {
            /* host reference of the first step */
            CHECK(aclrtSynchronizeStream(S));
            std::vector<double> hh(B * H), aa(B * H), pp(B * O), gpp(B * O), gaa(B * H), ghh(B * H), g1(H * I, 0), gb1r(H, 0), g2(O * H, 0), gb2r(O, 0);
            for (int b = 0; b < B; b++)
                for (int j = 0; j < H; j++) {
                    double s = b1v[static_cast<size_t>(j)];
                    for (int i = 0; i < I; i++) s += xv[static_cast<size_t>(b * I + i)] * w1v[static_cast<size_t>(j * I + i)];
                    hh[static_cast<size_t>(b * H + j)] = s;
                    aa[static_cast<size_t>(b * H + j)] = s > 0 ? s : 0;
                }
            double l = 0;
            for (int b = 0; b < B; b++)
                for (int o = 0; o < O; o++) {
                    double s = b2v[static_cast<size_t>(o)];
                    for (int j = 0; j < H; j++) s += aa[static_cast<size_t>(b * H + j)] * w2v[static_cast<size_t>(o * H + j)];
                    pp[static_cast<size_t>(b * O + o)] = s;
                    double d = s - yv[static_cast<size_t>(b * O + o)];
                    l += d * d;
                    gpp[static_cast<size_t>(b * O + o)] = 2 * d / (B * O);
                }
            l /= B * O;
            for (int b = 0; b < B; b++)
                for (int o = 0; o < O; o++) {
                    gb2r[static_cast<size_t>(o)] += gpp[static_cast<size_t>(b * O + o)];
                    for (int j = 0; j < H; j++) g2[static_cast<size_t>(o * H + j)] += gpp[static_cast<size_t>(b * O + o)] * aa[static_cast<size_t>(b * H + j)];
                }
            for (int b = 0; b < B; b++)
                for (int j = 0; j < H; j++) {
                    double s = 0;
                    for (int o = 0; o < O; o++) s += gpp[static_cast<size_t>(b * O + o)] * w2v[static_cast<size_t>(o * H + j)];
                    ghh[static_cast<size_t>(b * H + j)] = hh[static_cast<size_t>(b * H + j)] > 0 ? s : 0;
                    gb1r[static_cast<size_t>(j)] += ghh[static_cast<size_t>(b * H + j)];
                    for (int i = 0; i < I; i++) g1[static_cast<size_t>(j * I + i)] += ghh[static_cast<size_t>(b * H + j)] * xv[static_cast<size_t>(b * I + i)];
                }
            compare("MLP forward (logits)", read(p), pp, 1e-5);
            compare("MLP loss", read(loss), {l}, 1e-5);
            compare("MLP grad W2", read(gw2), g2, 1e-5);
            compare("MLP grad b2", read(gb2), gb2r, 1e-5);
            compare("MLP grad W1", read(gw1), g1, 1e-5);
            compare("MLP grad b1", read(gb1), gb1r, 1e-5);
        }
        /* SGD: p += -lr * g for all four parameters in one foreach call */
        GO(aclnnForeachAddListV2, params, grads, slr, params);
        if (step == 0 || step == 59) {
            CHECK(aclrtSynchronizeStream(S));
            double l = read(loss)[0];
            if (step == 0) first = l;
            last = l;
            printf("step %d loss %.6f\n", step, l);
        }
    }
    g_checks++;
    if (!(last < first * 0.1)) {
        printf("FAIL loss did not fall: %f -> %f\n", first, last);
        g_fail++;
    }
    printf("%d checks, %d failed\n", g_checks, g_fail);
    if (g_fail == 0) printf("PASS\n");
    return g_fail == 0 ? 0 : 1;
}
