/* aclnnFusedAdam in the reference's example style: the documented inputs (two parameters of
 * shapes [2,2,2] and [2,2], FLOAT step tensors whose first element is the step, a gradient
 * scale of 2, amsgrad, lr 0.001f, betas 0.9f/0.999f), then maximize with weight decay, a
 * found-inf of 1 that skips the step, FLOAT16 parameters, and the documented argument errors. */
#include <string>
#include "example_common.h"
#include "aclnnop/aclnn_fused_adam.h"

struct Param {
    std::vector<int64_t> shape;
    void* addr[6] = {};
    aclTensor* t[6] = {};  // param, grad, expAvg, expAvgSq, maxExpAvgSq, step
};

static int MakeParam(Param& p, const std::vector<int64_t>& shape, const std::vector<std::vector<float>>& data,
                     float step) {
    p.shape = shape;
    for (int k = 0; k < 5; k++) {
        int ret = CreateAclTensor(data[k], shape, &p.addr[k], ACL_FLOAT, &p.t[k]);
        CHECK_RET(ret == ACL_SUCCESS, return ret);
    }
    // the step tensor has the parameter's shape; only its first element counts
    std::vector<float> steps(GetShapeSize(shape), 0.0f);
    steps[0] = step;
    return CreateAclTensor(steps, shape, &p.addr[5], ACL_FLOAT, &p.t[5]);
}

static aclTensorList* List(std::vector<Param*> ps, int k) {
    std::vector<aclTensor*> v;
    for (auto p : ps) v.push_back(p->t[k]);
    return aclCreateTensorList(v.data(), v.size());
}

static void Print(const char* what, Param& p, int k) {
    auto size = GetShapeSize(p.shape);
    std::vector<float> out(size, 0);
    aclrtMemcpy(out.data(), size * sizeof(float), p.addr[k], size * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
    for (int64_t i = 0; i < size; i++) LOG_PRINT("%s[%ld] is: %f\n", what, i, out[i]);
}

static int Run(std::vector<Param*> ps, aclTensor* gradScale, aclTensor* foundInf, double lr, double beta1,
               double beta2, double weightDecay, double eps, bool amsgrad, bool maximize, aclrtStream stream) {
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor;
    auto ret = aclnnFusedAdamGetWorkspaceSize(List(ps, 0), List(ps, 1), List(ps, 2), List(ps, 3), List(ps, 4),
                                              List(ps, 5), gradScale, foundInf, lr, beta1, beta2, weightDecay, eps,
                                              amsgrad, maximize, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnFusedAdamGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void* workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnFusedAdam(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnFusedAdam failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    if (workspaceSize > 0) aclrtFree(workspaceAddr);
    return 0;
}

int main() {
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 1. the documented example
    Param p1, p2;
    ret = MakeParam(p1, {2, 2, 2},
                    {{1, 2, 3, 4, 5, 6, 7, 8},
                     {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8},
                     {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8},
                     {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8},
                     {1, 2, 3, 4, 5, 6, 7, 8}},
                    3);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = MakeParam(p2, {2, 2}, {{9, 10, 11, 12}, {0.9, 1.0, 1.1, 1.2}, {-1, -2, -3, -4}, {1, 2, 3, 4}, {-1, -1, -1, -1}},
                    4);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    void* scaleAddr = nullptr;
    aclTensor* gradScale = nullptr;
    ret = CreateAclTensor(std::vector<float>{2}, {1}, &scaleAddr, ACL_FLOAT, &gradScale);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = Run({&p1, &p2}, gradScale, nullptr, 0.001f, 0.9f, 0.999f, 0.0f, 1e-8, true, false, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    const char* names[] = {"param", "grad", "expAvg", "expAvgSq", "maxExpAvgSq"};
    for (int k = 0; k < 5; k++) {
        std::string n1 = std::string("1 ") + names[k], n2 = std::string("2 ") + names[k];
        Print(n1.c_str(), p1, k);
        Print(n2.c_str(), p2, k);
    }

    // 2. maximize with weight decay, no amsgrad (the maximum list is absent), step 0
    Param p3;
    ret = MakeParam(p3, {2}, {{1, -2}, {0.5, -0.25}, {0, 0}, {0, 0}, {0, 0}}, 0);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    {
        uint64_t ws = 0;
        aclOpExecutor* ex;
        ret = aclnnFusedAdamGetWorkspaceSize(List({&p3}, 0), List({&p3}, 1), List({&p3}, 2), List({&p3}, 3), nullptr,
                                             List({&p3}, 5), nullptr, nullptr, 0.1, 0.9, 0.99, 0.1, 1e-8, false, true,
                                             &ws, &ex);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("maximize GetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
        ret = aclnnFusedAdam(nullptr, ws, ex, stream);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("maximize aclnnFusedAdam failed. ERROR: %d\n", ret); return ret);
        aclrtSynchronizeStream(stream);
    }
    Print("maximize param", p3, 0);
    Print("maximize expAvg", p3, 2);

    // 3. a found-inf of 1 skips the step: nothing changes, not even the gradients
    void* infAddr = nullptr;
    aclTensor* foundInf = nullptr;
    ret = CreateAclTensor(std::vector<float>{1}, {1}, &infAddr, ACL_FLOAT, &foundInf);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = Run({&p3}, gradScale, foundInf, 0.1, 0.9, 0.99, 0.1, 1e-8, true, true, stream);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    Print("skipped param", p3, 0);
    Print("skipped grad", p3, 1);

    // 4. argument errors
    uint64_t ws = 0;
    aclOpExecutor* ex;
    ret = aclnnFusedAdamGetWorkspaceSize(nullptr, List({&p1}, 1), List({&p1}, 2), List({&p1}, 3), List({&p1}, 4),
                                         List({&p1}, 5), nullptr, nullptr, 0.001, 0.9, 0.999, 0, 1e-8, false, false,
                                         &ws, &ex);
    LOG_PRINT("null params: %d\n", ret);
    ret = aclnnFusedAdamGetWorkspaceSize(List({&p1, &p2}, 0), List({&p1, &p2}, 1), List({&p1, &p2}, 2),
                                         List({&p1, &p2}, 3), List({&p1, &p2}, 4), List({&p1}, 5), nullptr, nullptr,
                                         0.001, 0.9, 0.999, 0, 1e-8, true, false, &ws, &ex);
    LOG_PRINT("short stateSteps: %d\n", ret);
    ret = aclnnFusedAdamGetWorkspaceSize(List({&p1}, 0), List({&p2}, 1), List({&p1}, 2), List({&p1}, 3),
                                         List({&p1}, 4), List({&p1}, 5), nullptr, nullptr, 0.001, 0.9, 0.999, 0, 1e-8,
                                         false, false, &ws, &ex);
    LOG_PRINT("grad shape: %d\n", ret);
    ret = aclnnFusedAdamGetWorkspaceSize(List({&p1}, 0), List({&p1}, 1), List({&p1}, 2), List({&p1}, 3),
                                         List({&p2}, 4), List({&p1}, 5), nullptr, nullptr, 0.001, 0.9, 0.999, 0, 1e-8,
                                         true, false, &ws, &ex);
    LOG_PRINT("amsgrad max shape: %d\n", ret);
    std::vector<int32_t> ints(8, 1);
    void* intAddr = nullptr;
    aclTensor* intT = nullptr;
    CreateAclTensor(ints, {2, 2, 2}, &intAddr, ACL_INT32, &intT);
    aclTensorList* intList = aclCreateTensorList(&intT, 1);
    ret = aclnnFusedAdamGetWorkspaceSize(intList, List({&p1}, 1), List({&p1}, 2), List({&p1}, 3), nullptr,
                                         List({&p1}, 5), nullptr, nullptr, 0.001, 0.9, 0.999, 0, 1e-8, false, false,
                                         &ws, &ex);
    LOG_PRINT("int32 params: %d\n", ret);

    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
