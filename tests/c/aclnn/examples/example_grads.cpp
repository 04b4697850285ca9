/* Three operators torch_npu's autograd and in-place utilities reach, in the reference's example
 * style, with the references' own inputs where they give one:
 * - aclnnIm2colBackward: gradOutput [4, 2] = {0.1, 1.1, …, 7.1}, inputSize {1, 1}, kernel {2, 2},
 *   dilation {1, 1}, padding {1, 1}, stride {1, 2}: the one output element gathers 6.1 (block 0,
 *   kernel position (1, 1)) and 3.1 (block 1, kernel position (0, 1)) = 9.2;
 * - aclnnRepeatInterleaveGrad: yGrad [4, 3] = {3, 4, 5, 3, 4, 5, -3, -4, -5, -3, -4, -5},
 *   repeats {2, 2}, axis 0: {6, 8, 10, -6, -8, -10};
 * - aclnnInplaceFillDiagonal: a [5, 2] of zeros with 7 and wrap: elements (0,0), (1,1), (3,0),
 *   (4,1) become 7 (PyTorch's wrapped diagonal restarts after a blank row).
 * - aclnnReflectionPad1dBackward: self [1, 1, 3], padding (2, 1), gradOutput {1, …, 6}: output
 *   positions read inputs 2, 1, 0, 1, 2, 1, so gradInput = {3, 2 + 4 + 6, 1 + 5} = {3, 12, 6}.
 * - aclnnChannelShuffle: [1, 4, 1] = {0, 1, 2, 3} in 2 groups gives {0, 2, 1, 3};
 * - aclnnSoftMarginLoss (mean): self {0, 1}, target {1, -1}: (log 2 + log(1 + e)) / 2 = 1.003204.
 * - aclnnRReluWithNoise in evaluation (lower 0.1, upper 0.3): {-1, 2, -3, 4} gives
 *   {-0.2, 2, -0.6, 4}; noise is left as it was.
 * Then argument errors: a 1-value kernelSize for Im2colBackward (161002), a NULL repeats (161001),
 * a 1-D selfRef for FillDiagonal (161002). */
#include "example_common.h"
#include "aclnnop/aclnn_channel_shuffle.h"
#include "aclnnop/aclnn_fill_diagonal.h"
#include "aclnnop/aclnn_im2col_backward.h"
#include "aclnnop/aclnn_reflection_pad1d_backward.h"
#include "aclnnop/aclnn_repeat_interleave_grad.h"
#include "aclnnop/aclnn_rrelu_with_noise.h"
#include "aclnnop/aclnn_soft_margin_loss.h"

static aclrtStream stream;

static int Run(aclnnStatus (*run)(void *, uint64_t, aclOpExecutor *, aclrtStream), uint64_t ws, aclOpExecutor *ex) {
    void *w = nullptr;
    if (ws > 0) CHECK_RET(aclrtMalloc(&w, ws, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, return 1);
    auto ret = run(w, ws, ex, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("second phase failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    if (w) aclrtFree(w);
    return 0;
}

static void Print(const char *what, void *dev, size_t n) {
    std::vector<float> r(n);
    aclrtMemcpy(r.data(), n * 4, dev, n * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    for (size_t i = 0; i < n; i++) LOG_PRINT("%s[%zu] is: %f\n", what, i, r[i]);
}

int main() {
    auto ret = Init(0, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;

    void *gd, *od;
    aclTensor *g = nullptr, *o = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>{0.1, 1.1, 2.1, 3.1, 4.1, 5.1, 6.1, 7.1}, {4, 2}, &gd, ACL_FLOAT, &g) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{0}, {1, 1, 1}, &od, ACL_FLOAT, &o) == 0, return 1);
    std::vector<int64_t> isz = {1, 1}, ks = {2, 2}, dl = {1, 1}, pd = {1, 1}, st = {1, 2}, one = {2};
    aclIntArray *inputSize = aclCreateIntArray(isz.data(), 2), *kernel = aclCreateIntArray(ks.data(), 2),
                *dil = aclCreateIntArray(dl.data(), 2), *pad = aclCreateIntArray(pd.data(), 2),
                *str = aclCreateIntArray(st.data(), 2), *k1 = aclCreateIntArray(one.data(), 1);
    ret = aclnnIm2colBackwardGetWorkspaceSize(g, inputSize, kernel, dil, pad, str, o, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnIm2colBackwardGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnIm2colBackward, ws, ex) == 0, return 1);
    Print("im2col backward", od, 1);

    void *yd, *rd, *rod;
    aclTensor *y = nullptr, *r = nullptr, *ro = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>{3, 4, 5, 3, 4, 5, -3, -4, -5, -3, -4, -5}, {4, 3}, &yd, ACL_FLOAT, &y) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<int64_t>{2, 2}, {2}, &rd, ACL_INT64, &r) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>(6, 0), {2, 3}, &rod, ACL_FLOAT, &ro) == 0, return 1);
    ret = aclnnRepeatInterleaveGradGetWorkspaceSize(y, r, 0, ro, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnRepeatInterleaveGradGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnRepeatInterleaveGrad, ws, ex) == 0, return 1);
    Print("repeat interleave grad", rod, 6);

    void *fd;
    aclTensor *f = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>(10, 0), {5, 2}, &fd, ACL_FLOAT, &f) == 0, return 1);
    float seven = 7;
    aclScalar *v = aclCreateScalar(&seven, ACL_FLOAT);
    ret = aclnnInplaceFillDiagonalGetWorkspaceSize(f, v, true, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnInplaceFillDiagonalGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnInplaceFillDiagonal, ws, ex) == 0, return 1);
    Print("fill diagonal", fd, 10);

    void *sd, *dyd, *dxd;
    aclTensor *sx = nullptr, *dy = nullptr, *dx = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>(3, 0), {1, 1, 3}, &sd, ACL_FLOAT, &sx) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {1, 1, 6}, &dyd, ACL_FLOAT, &dy) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>(3, 0), {1, 1, 3}, &dxd, ACL_FLOAT, &dx) == 0, return 1);
    std::vector<int64_t> pads = {2, 1};
    aclIntArray *padding = aclCreateIntArray(pads.data(), 2);
    ret = aclnnReflectionPad1dBackwardGetWorkspaceSize(dy, sx, padding, dx, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnReflectionPad1dBackwardGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnReflectionPad1dBackward, ws, ex) == 0, return 1);
    Print("reflection pad1d backward", dxd, 3);

    void *csd, *cod;
    aclTensor *cs = nullptr, *co = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>{0, 1, 2, 3}, {1, 4, 1}, &csd, ACL_FLOAT, &cs) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>(4, 0), {1, 4, 1}, &cod, ACL_FLOAT, &co) == 0, return 1);
    ret = aclnnChannelShuffleGetWorkspaceSize(cs, 2, co, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnChannelShuffleGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnChannelShuffle, ws, ex) == 0, return 1);
    Print("channel shuffle", cod, 4);

    void *smx, *smt, *smo;
    aclTensor *sx2 = nullptr, *st2 = nullptr, *so2 = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>{0, 1}, {2}, &smx, ACL_FLOAT, &sx2) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{1, -1}, {2}, &smt, ACL_FLOAT, &st2) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{0}, {}, &smo, ACL_FLOAT, &so2) == 0, return 1);
    ret = aclnnSoftMarginLossGetWorkspaceSize(sx2, st2, 1, so2, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnSoftMarginLossGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnSoftMarginLoss, ws, ex) == 0, return 1);
    Print("soft margin loss", smo, 1);

    void *rxd, *rnd, *rrd;
    aclTensor *rx = nullptr, *rn = nullptr, *rout = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>{-1, 2, -3, 4}, {2, 2}, &rxd, ACL_FLOAT, &rx) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{4, 3, 2, 1}, {2, 2}, &rnd, ACL_FLOAT, &rn) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>(4, 0), {2, 2}, &rrd, ACL_FLOAT, &rout) == 0, return 1);
    float lo = 0.1f, hi = 0.3f;
    aclScalar *lower = aclCreateScalar(&lo, ACL_FLOAT), *upper = aclCreateScalar(&hi, ACL_FLOAT);
    ret = aclnnRReluWithNoiseGetWorkspaceSize(rx, rn, lower, upper, false, 0, 0, rout, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnRReluWithNoiseGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnRReluWithNoise, ws, ex) == 0, return 1);
    Print("rrelu", rrd, 4);
    Print("rrelu noise", rnd, 4);

    void *vd;
    aclTensor *vec = nullptr;
    CHECK_RET(CreateAclTensor(std::vector<float>(3, 0), {3}, &vd, ACL_FLOAT, &vec) == 0, return 1);
    LOG_PRINT("one-value kernelSize: %d\n", aclnnIm2colBackwardGetWorkspaceSize(g, inputSize, k1, dil, pad, str, o, &ws, &ex));
    LOG_PRINT("null repeats: %d\n", aclnnRepeatInterleaveGradGetWorkspaceSize(y, nullptr, 0, ro, &ws, &ex));
    LOG_PRINT("1-D fill diagonal: %d\n", aclnnInplaceFillDiagonalGetWorkspaceSize(vec, v, false, &ws, &ex));
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
