// Host flow of the vendor HCCL examples (hicann/hccl examples/02_collectives: scatter,
// allreduce), written anew: main does aclInit, aclrtGetDeviceCount, aclrtSetDevice(root)
// and HcclGetRootInfo into aclrtMallocHost memory; one thread per device does
// aclrtSetDevice, aclrtMalloc(HUGE_ONLY), HcclCommInitRootInfo, aclrtCreateStream, the
// collective, aclrtSynchronizeStream, the check, HcclCommDestroy, frees, aclrtDestroyStream
// and aclrtResetDevice; main frees the root info and calls aclFinalize without resetting
// its own device. Non-root ranks pass a NULL send buffer to HcclScatter, as the example.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include "hccl/hccl.h"
#include "hccl/hccl_types.h"

#define ACLCHECK(call)                                                                      \
    do {                                                                                    \
        int r_ = (call);                                                                    \
        if (r_ != ACL_SUCCESS) {                                                            \
            const char *m_ = aclGetRecentErrMsg();                                          \
            std::printf("FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, r_, \
                        m_ ? m_ : "(no message)");                                          \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

#define HCCLCHECK(call)                                                                     \
    do {                                                                                    \
        int r_ = (call);                                                                    \
        if (r_ != HCCL_SUCCESS) {                                                           \
            std::printf("FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, r_);    \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

namespace {
struct ThreadContext {
    HcclRootInfo *rootInfo;
    uint32_t rootRank;
    uint32_t device;
    uint32_t devCount;
};

std::atomic<int> g_failures{0};

int Rank(ThreadContext *ctx)
{
    const uint32_t n = ctx->devCount;
    const uint32_t dev = ctx->device;
    const uint64_t sendCount = n;
    const size_t sendSize = sendCount * sizeof(float);
    void *sendBuf = nullptr;
    void *recvBuf = nullptr;
    void *sumBuf = nullptr;
    ACLCHECK(aclrtSetDevice(static_cast<int32_t>(dev)));
    ACLCHECK(aclrtMalloc(&recvBuf, sizeof(float), ACL_MEM_MALLOC_HUGE_ONLY));
    ACLCHECK(aclrtMalloc(&sumBuf, sendSize, ACL_MEM_MALLOC_HUGE_ONLY));
    void *host = nullptr;
    ACLCHECK(aclrtMallocHost(&host, sendSize));
    float *h = static_cast<float *>(host);
    if (dev == ctx->rootRank) {
        ACLCHECK(aclrtMalloc(&sendBuf, sendSize, ACL_MEM_MALLOC_HUGE_ONLY));
        for (uint32_t i = 0; i < sendCount; ++i) {
            h[i] = static_cast<float>(i) * 10.0f;
        }
        ACLCHECK(aclrtMemcpy(sendBuf, sendSize, host, sendSize, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    for (uint32_t i = 0; i < sendCount; ++i) {
        h[i] = static_cast<float>(dev + 1);
    }
    ACLCHECK(aclrtMemcpy(sumBuf, sendSize, host, sendSize, ACL_MEMCPY_HOST_TO_DEVICE));

    HcclComm comm = nullptr;
    HCCLCHECK(HcclCommInitRootInfo(n, ctx->rootInfo, dev, &comm));
    aclrtStream stream = nullptr;
    ACLCHECK(aclrtCreateStream(&stream));
    HCCLCHECK(HcclScatter(sendBuf, recvBuf, 1, HCCL_DATA_TYPE_FP32, ctx->rootRank, comm, stream));
    HCCLCHECK(HcclAllReduce(sumBuf, sumBuf, sendCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    ACLCHECK(aclrtSynchronizeStream(stream));

    float got = -1.0f;
    ACLCHECK(aclrtMemcpy(&got, sizeof(got), recvBuf, sizeof(got), ACL_MEMCPY_DEVICE_TO_HOST));
    if (got != static_cast<float>(dev) * 10.0f) {
        std::printf("FAIL rank %u: scatter gave %f\n", dev, got);
        return 1;
    }
    ACLCHECK(aclrtMemcpy(host, sendSize, sumBuf, sendSize, ACL_MEMCPY_DEVICE_TO_HOST));
    const float want = static_cast<float>(n * (n + 1) / 2);
    for (uint32_t i = 0; i < sendCount; ++i) {
        if (h[i] != want) {
            std::printf("FAIL rank %u: allreduce element %u is %f, expected %f\n", dev, i, h[i], want);
            return 1;
        }
    }
    HCCLCHECK(HcclCommDestroy(comm));
    if (sendBuf != nullptr) {
        ACLCHECK(aclrtFree(sendBuf));
    }
    ACLCHECK(aclrtFree(recvBuf));
    ACLCHECK(aclrtFree(sumBuf));
    ACLCHECK(aclrtFreeHost(host));
    ACLCHECK(aclrtDestroyStream(stream));
    ACLCHECK(aclrtResetDevice(static_cast<int32_t>(dev)));
    return 0;
}
} // namespace

int main()
{
    ACLCHECK(aclInit(nullptr));
    uint32_t devCount = 0;
    ACLCHECK(aclrtGetDeviceCount(&devCount));
    const int32_t rootRank = 0;
    ACLCHECK(aclrtSetDevice(rootRank));
    void *rootInfoBuf = nullptr;
    ACLCHECK(aclrtMallocHost(&rootInfoBuf, sizeof(HcclRootInfo)));
    HcclRootInfo *rootInfo = static_cast<HcclRootInfo *>(rootInfoBuf);
    HCCLCHECK(HcclGetRootInfo(rootInfo));
    std::vector<std::thread> threads(devCount);
    std::vector<ThreadContext> args(devCount);
    for (uint32_t i = 0; i < devCount; i++) {
        args[i] = ThreadContext{rootInfo, static_cast<uint32_t>(rootRank), i, devCount};
        threads[i] = std::thread([&args, i]() {
            if (Rank(&args[i]) != 0) {
                g_failures++;
            }
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    ACLCHECK(aclrtFreeHost(rootInfoBuf));
    ACLCHECK(aclFinalize());
    if (g_failures.load() != 0) {
        std::printf("FAIL: %d rank(s) failed\n", g_failures.load());
        return 1;
    }
    std::printf("hccl flow passed on %u devices\n", devCount);
    return 0;
}
