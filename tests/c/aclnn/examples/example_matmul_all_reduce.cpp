// aclnnMatmulAllReduce as its operator page's example runs it: one process, HcclCommInitAll
// over the devices, one thread per rank (each with its device's context and stream), the
// communicator's name from HcclGetCommName passed as `group`. Written from the page alone;
// the inputs are FLOAT16 ones (the page fills int16 1s, i.e. the FLOAT16 bit pattern 0x0001),
// so every element of the result is ndev * (k + 1) = 4 * 65 = 260, printed and checked.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#include "acl/acl.h"
#include "hccl/hccl.h"
#include "aclnnop/aclnn_matmul_all_reduce.h"

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

#define LOG_PRINT(message, ...)         \
    do {                                \
        printf(message, ##__VA_ARGS__); \
    } while (0)

static const int ndev = 4;
static const uint16_t FP16_ONE = 0x3c00;
static std::atomic<int> g_bad{0};

static int64_t GetShapeSize(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (auto i : shape) n *= i;
    return n;
}

template <typename T>
static int CreateAclTensor(const std::vector<T> &hostData, const std::vector<int64_t> &shape, void **deviceAddr,
                           aclDataType dataType, aclTensor **tensor) {
    auto size = GetShapeSize(shape) * sizeof(T);
    auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) strides[i] = shape[i + 1] * strides[i + 1];
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                              shape.data(), shape.size(), *deviceAddr);
    return 0;
}

struct Args {
    uint32_t rankId;
    HcclComm hcclComm;
    aclrtStream stream;
    aclrtContext context;
};

static int launchOneThreadMatmulAllReduce(Args &args) {
    int ret = aclrtSetCurrentContext(args.context);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetCurrentContext failed. ERROR: %d\n", ret); return ret);
    char hcom_name[128];
    ret = HcclGetCommName(args.hcclComm, hcom_name);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("[ERROR] HcclGetCommName failed. ret = %d \n", ret); return -1);

    std::vector<int64_t> x1Shape = {32, 64};
    std::vector<int64_t> x2Shape = {64, 128};
    std::vector<int64_t> biasShape = {128};
    std::vector<int64_t> outShape = {32, 128};
    void *x1DeviceAddr = nullptr, *x2DeviceAddr = nullptr, *biasDeviceAddr = nullptr, *outDeviceAddr = nullptr;
    aclTensor *x1 = nullptr, *x2 = nullptr, *bias = nullptr, *out = nullptr;
    int64_t commTurn = 0;
    int64_t streamMode = 1;
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    void *workspaceAddr = nullptr;

    std::vector<uint16_t> x1HostData(GetShapeSize(x1Shape), FP16_ONE);
    std::vector<uint16_t> x2HostData(GetShapeSize(x2Shape), FP16_ONE);
    std::vector<uint16_t> biasHostData(GetShapeSize(biasShape), FP16_ONE);
    std::vector<uint16_t> outHostData(GetShapeSize(outShape), 0);
    ret = CreateAclTensor(x1HostData, x1Shape, &x1DeviceAddr, aclDataType::ACL_FLOAT16, &x1);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(x2HostData, x2Shape, &x2DeviceAddr, aclDataType::ACL_FLOAT16, &x2);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(biasHostData, biasShape, &biasDeviceAddr, aclDataType::ACL_FLOAT16, &bias);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(outHostData, outShape, &outDeviceAddr, aclDataType::ACL_FLOAT16, &out);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = aclnnMatmulAllReduceGetWorkspaceSize(x1, x2, bias, hcom_name, "sum", commTurn, streamMode, out,
                                               &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS,
              LOG_PRINT("aclnnMatmulAllReduceGetWorkspaceSize failed. ERROR: %d %s\n", ret, aclGetRecentErrMsg());
              return ret);
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }
    ret = aclnnMatmulAllReduce(workspaceAddr, workspaceSize, executor, args.stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnMatmulAllReduce failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStreamWithTimeout(args.stream, 10000);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    std::vector<uint16_t> result(GetShapeSize(outShape));
    ret = aclrtMemcpy(result.data(), result.size() * 2, outDeviceAddr, result.size() * 2, ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result failed. ERROR: %d\n", ret); return ret);
    // 260 in FLOAT16 is 0x5c10
    int wrong = 0;
    for (auto v : result) wrong += v != 0x5c10;
    if (wrong) g_bad++;
    LOG_PRINT("device%u aclnnMatmulAllReduce execute success, out[0] bits 0x%04x, %d of %zu elements differ from 260\n",
              args.rankId, result[0], wrong, result.size());

    aclDestroyTensor(x1);
    aclDestroyTensor(x2);
    aclDestroyTensor(bias);
    aclDestroyTensor(out);
    aclrtFree(x1DeviceAddr);
    aclrtFree(x2DeviceAddr);
    aclrtFree(biasDeviceAddr);
    aclrtFree(outDeviceAddr);
    if (workspaceSize > 0) aclrtFree(workspaceAddr);
    aclrtDestroyStream(args.stream);
    HcclCommDestroy(args.hcclComm);
    aclrtDestroyContext(args.context);
    aclrtResetDevice(args.rankId);
    return 0;
}

int main() {
    int32_t devices[ndev];
    for (int i = 0; i < ndev; i++) devices[i] = i;
    HcclComm comms[128];
    int ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    for (int i = 0; i < ndev; i++) {
        ret = aclrtSetDevice(devices[i]);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    }
    ret = HcclCommInitAll(ndev, devices, comms);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("HcclCommInitAll failed. ERROR: %d\n", ret); return ret);
    Args args[ndev];
    aclrtStream stream[ndev];
    aclrtContext context[ndev];
    for (uint32_t rankId = 0; rankId < ndev; rankId++) {
        ret = aclrtSetDevice(rankId);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
        ret = aclrtCreateContext(&context[rankId], rankId);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateContext failed. ERROR: %d\n", ret); return ret);
        ret = aclrtCreateStream(&stream[rankId]);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
    }
    std::vector<std::unique_ptr<std::thread>> threads(ndev);
    int rets[ndev] = {0};
    for (uint32_t rankId = 0; rankId < ndev; rankId++) {
        args[rankId].rankId = rankId;
        args[rankId].hcclComm = comms[rankId];
        args[rankId].stream = stream[rankId];
        args[rankId].context = context[rankId];
        threads[rankId].reset(new std::thread([&, rankId] { rets[rankId] = launchOneThreadMatmulAllReduce(args[rankId]); }));
    }
    for (uint32_t rankId = 0; rankId < ndev; rankId++) threads[rankId]->join();
    aclFinalize();
    for (int r : rets)
        if (r != 0) return 1;
    if (g_bad) return 1;
    LOG_PRINT("example_matmul_all_reduce passed\n");
    return 0;
}
