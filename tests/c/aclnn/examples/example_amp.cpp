/* The two operators of dynamic loss scaling, in the reference's example style.
 * aclnnAmpUpdateScale, the reference's example: scale 65536, tracker 900, foundInf 0, interval
 * 1000 gives 65536 and 901; then tracker 999 grows the scale to 131072 (tracker 0), foundInf 1
 * backs it off to 32768 (tracker 0), and an FLOAT16 scale of 65504 that would grow to inf stays
 * (tracker 0). aclnnForeachNonFiniteCheckAndUnscale with invScale 0.5 on {1, 2, 3} and
 * {4, inf}: {0.5, 1, 1.5}, {2, inf}, foundInf 1; on finite grads foundInf stays 0. Argument
 * errors: growthInterval 0 and a FLOAT16 growthTracker are 161002, a NULL foundInf 161001. */
#include "example_common.h"
#include "aclnnop/aclnn_amp_update_scale.h"
#include "aclnnop/aclnn_foreach_non_finite_check_and_unscale.h"

#include <cmath>

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

template <typename S>
static int UpdateScale(const char *label, S scaleV, int32_t trackerV, S foundV, aclDataType dt, int64_t interval) {
    std::vector<int64_t> shape = {1};
    void *sd, *td, *fd;
    aclTensor *s, *t, *f;
    CHECK_RET(CreateAclTensor(std::vector<S>{scaleV}, shape, &sd, dt, &s) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<int32_t>{trackerV}, shape, &td, ACL_INT32, &t) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<S>{foundV}, shape, &fd, dt, &f) == 0, return 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    // In place, as torch_npu calls it: the outputs are the inputs.
    auto ret = aclnnAmpUpdateScaleGetWorkspaceSize(s, t, f, 2.0, 0.5, interval, s, t, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAmpUpdateScaleGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnAmpUpdateScale, ws, ex) == 0, return 1);
    S so;
    int32_t to;
    aclrtMemcpy(&so, sizeof(S), sd, sizeof(S), ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(&to, 4, td, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    double sv = dt == ACL_FLOAT16 ? (double)*(uint16_t *)&so : (double)*(float *)&so;
    LOG_PRINT("%s: updatedScale = %s%f, updatedGrowthTracker = %d\n", label, dt == ACL_FLOAT16 ? "fp16 bits " : "", sv, to);
    aclDestroyTensor(s), aclDestroyTensor(t), aclDestroyTensor(f);
    aclrtFree(sd), aclrtFree(td), aclrtFree(fd);
    return 0;
}

int main() {
    auto ret = Init(0, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(UpdateScale<float>("documented", 65536.0f, 900, 0.0f, ACL_FLOAT, 1000) == 0, return 1);
    CHECK_RET(UpdateScale<float>("grown", 65536.0f, 999, 0.0f, ACL_FLOAT, 1000) == 0, return 1);
    CHECK_RET(UpdateScale<float>("backed off", 65536.0f, 500, 1.0f, ACL_FLOAT, 1000) == 0, return 1);
    // 65504 = 0x7BFF in FLOAT16; doubling it overflows, so it stays.
    CHECK_RET(UpdateScale<uint16_t>("fp16 overflow", (uint16_t)0x7BFF, 2, (uint16_t)0, ACL_FLOAT16, 3) == 0, return 1);

    std::vector<int64_t> s3 = {3}, s2 = {2}, s1 = {1};
    void *ad, *bd, *fd, *id;
    aclTensor *a, *b, *f, *inv;
    CHECK_RET(CreateAclTensor(std::vector<float>{1, 2, 3}, s3, &ad, ACL_FLOAT, &a) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{4, INFINITY}, s2, &bd, ACL_FLOAT, &b) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{0}, s1, &fd, ACL_FLOAT, &f) == 0, return 1);
    CHECK_RET(CreateAclTensor(std::vector<float>{0.5f}, s1, &id, ACL_FLOAT, &inv) == 0, return 1);
    aclTensor *both[2] = {a, b};
    aclTensorList *grads = aclCreateTensorList(both, 2), *finite = aclCreateTensorList(&a, 1);
    uint64_t ws = 0;
    aclOpExecutor *ex = nullptr;
    ret = aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(grads, f, inv, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnForeachNonFiniteCheckAndUnscale, ws, ex) == 0, return 1);
    std::vector<float> av(3), bv(2);
    float fv;
    aclrtMemcpy(av.data(), 12, ad, 12, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(bv.data(), 8, bd, 8, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(&fv, 4, fd, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    LOG_PRINT("unscaled: %f %f %f | %f %f, foundInf = %f\n", av[0], av[1], av[2], bv[0], bv[1], fv);
    // Finite grads only, foundInf back at 0: it stays 0.
    float zero = 0;
    aclrtMemcpy(fd, 4, &zero, 4, ACL_MEMCPY_HOST_TO_DEVICE);
    ret = aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(finite, f, inv, &ws, &ex);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("second GetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    CHECK_RET(Run(aclnnForeachNonFiniteCheckAndUnscale, ws, ex) == 0, return 1);
    aclrtMemcpy(av.data(), 12, ad, 12, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtMemcpy(&fv, 4, fd, 4, ACL_MEMCPY_DEVICE_TO_HOST);
    LOG_PRINT("finite: %f %f %f, foundInf = %f\n", av[0], av[1], av[2], fv);

    // Argument errors.
    LOG_PRINT("interval 0: %d\n", aclnnAmpUpdateScaleGetWorkspaceSize(f, f, f, 2.0, 0.5, 0, f, f, &ws, &ex));
    LOG_PRINT("null foundInf: %d\n", aclnnForeachNonFiniteCheckAndUnscaleGetWorkspaceSize(grads, nullptr, inv, &ws, &ex));
    LOG_PRINT("float tracker: %d\n", aclnnAmpUpdateScaleGetWorkspaceSize(f, f, f, 2.0, 0.5, 10, f, f, &ws, &ex));
    aclDestroyTensorList(grads);
    aclDestroyTensorList(finite);
    aclDestroyTensor(f), aclDestroyTensor(inv);
    aclrtFree(ad), aclrtFree(bd), aclrtFree(fd), aclrtFree(id);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
