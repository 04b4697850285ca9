/* aclnnGroupQuant in the reference's example style, with its example's data: x [4, 2] = 0..7,
 * scale [3, 2] = {1, 2} per group, groupIndex {1, 2, 4} (rows 0 | 1 | 2-3), offset 2, INT8 out:
 * y = round(x * scale + 2) = {2, 4, 4, 8, 6, 12, 8, 16}. */
#include "example_common.h"
#include "aclnnop/aclnn_group_quant.h"

int main() {
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> selfShape = {4, 2}, scaleShape = {3, 2}, groupIndexShape = {3}, offsetShape = {1};
    std::vector<int64_t> outShape = {4, 2};
    void *selfAddr = nullptr, *scaleAddr = nullptr, *groupAddr = nullptr, *offsetAddr = nullptr, *outAddr = nullptr;
    aclTensor *self = nullptr, *scale = nullptr, *groupIndex = nullptr, *offset = nullptr, *out = nullptr;
    std::vector<float> selfHost = {0, 1, 2, 3, 4, 5, 6, 7}, scaleHost = {1, 2, 1, 2, 1, 2}, offsetHost = {2};
    std::vector<int32_t> groupHost = {1, 2, 4};
    std::vector<int8_t> outHost(8, 0);
    ret = CreateAclTensor(selfHost, selfShape, &selfAddr, aclDataType::ACL_FLOAT, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(scaleHost, scaleShape, &scaleAddr, aclDataType::ACL_FLOAT, &scale);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(groupHost, groupIndexShape, &groupAddr, aclDataType::ACL_INT32, &groupIndex);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(offsetHost, offsetShape, &offsetAddr, aclDataType::ACL_FLOAT, &offset);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHost, outShape, &outAddr, aclDataType::ACL_INT8, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    const int32_t dstType = 2;
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnGroupQuantGetWorkspaceSize(self, scale, groupIndex, offset, dstType, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnGroupQuantGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnGroupQuant(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnGroupQuant failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    auto size = GetShapeSize(outShape);
    std::vector<int8_t> resultData(size, 0);
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(resultData[0]), outAddr, size * sizeof(int8_t),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    for (int64_t i = 0; i < size; i++) LOG_PRINT("result[%ld] is: %d\n", i, resultData[i]);
    aclDestroyTensor(self);
    aclDestroyTensor(scale);
    aclDestroyTensor(groupIndex);
    aclDestroyTensor(offset);
    aclDestroyTensor(out);
    for (void *p : {selfAddr, scaleAddr, groupAddr, offsetAddr, outAddr}) aclrtFree(p);
    if (workspaceSize > 0) aclrtFree(workspaceAddr);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return 0;
}
