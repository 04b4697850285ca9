/* aclnnAscendQuant, then aclnnTransQuantParamV2 + aclnnQuantMatmulV4, written the way the
 * reference's examples are (host vectors, CreateAclTensor, the two phases, a UINT64 quant
 * parameter tensor as the reference creates it):
 * AscendQuant: x {0.5, 1.5, 2.5, -0.5, 1.2, -2.6, 100, -200} as [4, 2], scale {2, 1},
 * offset {0.5, 0}, "round" -> y = round_half_even(x * scale + offset) saturated to int8 =
 * {2, 2, 6, 0, 3, -3, 127, -128}.
 * QuantMatmulV4: x1 int8 ones [5, 2] @ x2 int8 ones [2, 3] with scale 1.0 (through
 * TransQuantParamV2) -> float16 out, every element 2. */
#include <cstring>
#include "example_common.h"
#include "aclnnop/aclnn_ascend_quant.h"
#include "aclnnop/aclnn_quant_matmul_v4.h"
#include "aclnnop/aclnn_trans_quant_param_v2.h"

static float Fp16ToFloat(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, f;
    if (exp == 0) {
        f = sign; /* the example's values are normal */
    } else {
        f = sign | ((exp + 112) << 23) | (man << 13);
    }
    float r;
    memcpy(&r, &f, 4);
    return r;
}

/* the second phase (and the synchronisation) after a successful first one */
static int RunSecond(aclnnStatus ret1, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream,
                     aclnnStatus (*second)(void*, uint64_t, aclOpExecutor*, aclrtStream), const char* name) {
    CHECK_RET(ret1 == ACL_SUCCESS, LOG_PRINT("%sGetWorkspaceSize failed. ERROR: %d\n", name, ret1); return ret1);
    void* workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        auto ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    auto ret = second(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("%s failed. ERROR: %d\n", name, ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    if (workspaceAddr) aclrtFree(workspaceAddr);
    return 0;
}

int main() {
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    /* 1. AscendQuant */
    std::vector<int64_t> xShape = {4, 2}, scaleShape = {2};
    std::vector<float> xHostData = {0.5, 1.5, 2.5, -0.5, 1.2, -2.6, 100, -200};
    std::vector<float> scaleHostData = {2, 1}, offsetHostData = {0.5, 0};
    std::vector<int8_t> yHostData(8, 0);
    void *xDeviceAddr = nullptr, *scaleDeviceAddr = nullptr, *offsetDeviceAddr = nullptr, *yDeviceAddr = nullptr;
    aclTensor *x = nullptr, *scale = nullptr, *offset = nullptr, *y = nullptr;
    ret = CreateAclTensor(xHostData, xShape, &xDeviceAddr, aclDataType::ACL_FLOAT, &x);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(scaleHostData, scaleShape, &scaleDeviceAddr, aclDataType::ACL_FLOAT, &scale);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(offsetHostData, scaleShape, &offsetDeviceAddr, aclDataType::ACL_FLOAT, &offset);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(yHostData, xShape, &yDeviceAddr, aclDataType::ACL_INT8, &y);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = nullptr;
    const char* roundMode = "round";
    ret = aclnnAscendQuantGetWorkspaceSize(x, scale, offset, false, roundMode, ACL_INT8, y, &workspaceSize, &executor);
    ret = RunSecond(ret, workspaceSize, executor, stream, aclnnAscendQuant, "aclnnAscendQuant");
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<int8_t> yResult(8, 0);
    ret = aclrtMemcpy(yResult.data(), yResult.size(), yDeviceAddr, yResult.size(), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    for (int64_t i = 0; i < 8; i++) LOG_PRINT("quant result[%ld] is: %d\n", i, yResult[i]);

    /* 2. TransQuantParamV2 + QuantMatmulV4 */
    std::vector<int64_t> x1Shape = {5, 2}, x2Shape = {2, 3}, qScaleShape = {1}, outShape = {5, 3};
    std::vector<int8_t> x1HostData(10, 1), x2HostData(6, 1);
    std::vector<float> qScaleHostData = {1.0f};
    std::vector<uint64_t> quantParamHostData(1, 0);
    std::vector<uint16_t> outHostData(15, 0);
    void *x1DeviceAddr = nullptr, *x2DeviceAddr = nullptr, *qScaleDeviceAddr = nullptr, *quantParamDeviceAddr = nullptr,
         *outDeviceAddr = nullptr;
    aclTensor *x1 = nullptr, *x2 = nullptr, *qScale = nullptr, *quantParam = nullptr, *out = nullptr;
    ret = CreateAclTensor(x1HostData, x1Shape, &x1DeviceAddr, aclDataType::ACL_INT8, &x1);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(x2HostData, x2Shape, &x2DeviceAddr, aclDataType::ACL_INT8, &x2);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(qScaleHostData, qScaleShape, &qScaleDeviceAddr, aclDataType::ACL_FLOAT, &qScale);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(quantParamHostData, qScaleShape, &quantParamDeviceAddr, aclDataType::ACL_UINT64, &quantParam);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT16, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclnnTransQuantParamV2GetWorkspaceSize(qScale, nullptr, quantParam, &workspaceSize, &executor);
    ret = RunSecond(ret, workspaceSize, executor, stream, aclnnTransQuantParamV2, "aclnnTransQuantParamV2");
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclnnQuantMatmulV4GetWorkspaceSize(x1, x2, quantParam, nullptr, nullptr, nullptr, false, false, out,
                                                         &workspaceSize, &executor);
    ret = RunSecond(ret, workspaceSize, executor, stream, aclnnQuantMatmulV4, "aclnnQuantMatmulV4");
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::vector<uint16_t> outResult(15, 0);
    ret = aclrtMemcpy(outResult.data(), outResult.size() * 2, outDeviceAddr, outResult.size() * 2, ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    for (int64_t i = 0; i < 15; i++) LOG_PRINT("matmul result[%ld] is: %f\n", i, Fp16ToFloat(outResult[i]));

    for (aclTensor* t : {x, scale, offset, y, x1, x2, qScale, quantParam, out}) aclDestroyTensor(t);
    for (void* p : {xDeviceAddr, scaleDeviceAddr, offsetDeviceAddr, yDeviceAddr, x1DeviceAddr, x2DeviceAddr, qScaleDeviceAddr,
                    quantParamDeviceAddr, outDeviceAddr})
        aclrtFree(p);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
