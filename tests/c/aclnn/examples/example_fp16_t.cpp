/* float16 buffers filled and read through CANN's host type op::fp16_t
 * (aclnn/opdev/fp16_t.h), as the reference's attention examples do: aclnnAdd on FLOAT16
 * tensors made from std::vector<op::fp16_t>, the result read back into one and converted
 * with static_cast<float>. */
#include "example_common.h"
#include "aclnn/opdev/fp16_t.h"
#include "aclnnop/aclnn_add.h"

int main() {
    aclrtStream stream;
    auto ret = Init(0, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> shape = {2, 3};
    std::vector<op::fp16_t> selfHostData = {0.5, 1.5, -2.25, 3, 0.1f, 60000};
    std::vector<op::fp16_t> otherHostData(6, 0.25);
    std::vector<op::fp16_t> outHostData(6, 0);
    void *selfAddr = nullptr, *otherAddr = nullptr, *outAddr = nullptr;
    aclTensor *self = nullptr, *other = nullptr, *out = nullptr;
    ret = CreateAclTensor(selfHostData, shape, &selfAddr, aclDataType::ACL_FLOAT16, &self);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(otherHostData, shape, &otherAddr, aclDataType::ACL_FLOAT16, &other);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, shape, &outAddr, aclDataType::ACL_FLOAT16, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    float alphaValue = 4.0f;
    aclScalar *alpha = aclCreateScalar(&alphaValue, aclDataType::ACL_FLOAT);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnAddGetWorkspaceSize(self, other, alpha, out, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAddGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    ret = aclnnAdd(nullptr, 0, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnAdd failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    std::vector<op::fp16_t> resultData(6, 0);
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(resultData[0]), outAddr,
                      resultData.size() * sizeof(resultData[0]), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    for (size_t i = 0; i < resultData.size(); i++) {
        LOG_PRINT("result[%zu] is: %f (0x%04x)\n", i, static_cast<float>(resultData[i]), resultData[i].val);
    }
    aclDestroyTensor(self);
    aclDestroyTensor(other);
    aclDestroyTensor(out);
    aclDestroyScalar(alpha);
    aclrtFree(selfAddr);
    aclrtFree(otherAddr);
    aclrtFree(outAddr);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
