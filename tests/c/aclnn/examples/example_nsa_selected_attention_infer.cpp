/* aclnnNsaSelectedAttentionInfer in the reference's example style, with its example's shapes:
 * batch 1, one query token, one head, D 192 / 128, one cache block of 64 rows, selectBlockSize
 * 64, selectBlockCount 1, actualKvSeqLen 48 (the selected block runs past the sequence and is
 * cut at 48), query and key all ones. Here value row p holds p, so every output element is
 * the mean of 0..47 = 23.5 (31.5 if the block were not cut). */
#include <cstring>
#include <string>
#include "example_common.h"
#include "aclnn/opdev/fp16_t.h"
#include "aclnnop/aclnn_nsa_selected_attention_infer.h"

int main() {
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);
    int64_t batch = 1, s1 = 1, d1 = 192, d2 = 128, g = 1, n2 = 1, blockSize = 64, selectBlockSize = 64;
    int64_t selectBlockCount = 1, blockTableLength = 1, numBlocks = batch * blockTableLength;
    std::vector<int64_t> kvLen(batch, 48), qLen(batch, s1);
    aclIntArray *actualKvSeqLen = aclCreateIntArray(kvLen.data(), kvLen.size());
    aclIntArray *actualQSeqLen = aclCreateIntArray(qLen.data(), qLen.size());
    std::vector<int64_t> queryShape = {batch, s1, n2 * g, d1}, keyShape = {numBlocks, blockSize, n2, d1};
    std::vector<int64_t> valueShape = {numBlocks, blockSize, n2, d2}, topkShape = {batch, s1, n2, selectBlockCount};
    std::vector<int64_t> tableShape = {batch, blockTableLength}, outputShape = {batch, s1, n2 * g, d2};
    std::vector<op::fp16_t> queryHost(GetShapeSize(queryShape), 1), keyHost(GetShapeSize(keyShape), 1);
    std::vector<op::fp16_t> valueHost(GetShapeSize(valueShape), 1), outputHost(GetShapeSize(outputShape), 1);
    for (int64_t p = 0; p < blockSize; p++)
        for (int64_t e = 0; e < d2; e++) valueHost[p * d2 + e] = static_cast<float>(p);
    std::vector<int32_t> tableHost(GetShapeSize(tableShape), 0), topkHost = {0};
    void *qAddr = nullptr, *kAddr = nullptr, *vAddr = nullptr, *tAddr = nullptr, *oAddr = nullptr, *iAddr = nullptr;
    aclTensor *query = nullptr, *key = nullptr, *value = nullptr, *table = nullptr, *output = nullptr, *topk = nullptr;
    ret = CreateAclTensor(queryHost, queryShape, &qAddr, aclDataType::ACL_FLOAT16, &query);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(keyHost, keyShape, &kAddr, aclDataType::ACL_FLOAT16, &key);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(valueHost, valueShape, &vAddr, aclDataType::ACL_FLOAT16, &value);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(tableHost, tableShape, &tAddr, aclDataType::ACL_INT32, &table);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outputHost, outputShape, &oAddr, aclDataType::ACL_FLOAT16, &output);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(topkHost, topkShape, &iAddr, aclDataType::ACL_INT32, &topk);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    std::string layoutStr = "BSND";
    std::vector<char> layout(layoutStr.begin(), layoutStr.end());
    layout.push_back('\0');
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    ret = aclnnNsaSelectedAttentionInferGetWorkspaceSize(query, key, value, topk, nullptr, table, actualQSeqLen,
                                                         actualKvSeqLen, layout.data(), n2 * g, n2, selectBlockSize,
                                                         selectBlockCount, blockSize, 1.0, 0, output, &workspaceSize,
                                                         &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnNsaSelectedAttentionInferGetWorkspaceSize failed. ERROR: %d\n", ret);
              return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnNsaSelectedAttentionInfer(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnNsaSelectedAttentionInfer failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);
    auto size = GetShapeSize(outputShape);
    std::vector<op::fp16_t> resultData(size, 0);
    ret = aclrtMemcpy(resultData.data(), resultData.size() * sizeof(resultData[0]), oAddr,
                      size * sizeof(resultData[0]), ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    int wrong = 0;
    for (int64_t i = 0; i < size; i++) wrong += static_cast<float>(resultData[i]) != 23.5f;
    for (int64_t i = 0; i < 4; i++) LOG_PRINT("index: %ld: %f\n", i, static_cast<float>(resultData[i]));
    LOG_PRINT("%d of %ld elements differ from 23.5\n", wrong, size);
    aclDestroyTensor(query);
    aclDestroyTensor(key);
    aclDestroyTensor(value);
    aclDestroyTensor(output);
    aclDestroyTensor(topk);
    aclDestroyTensor(table);
    aclDestroyIntArray(actualKvSeqLen);
    aclDestroyIntArray(actualQSeqLen);
    for (void *p : {qAddr, kAddr, vAddr, tAddr, oAddr, iAddr}) aclrtFree(p);
    if (workspaceSize > 0) aclrtFree(workspaceAddr);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    return wrong == 0 ? 0 : 1;
}
