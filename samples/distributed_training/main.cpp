/*
 * The host program of seed document 003 ("CANN赋能AIGC分布式训练"), run as a complete, self-checking
 * job: InitDistributedResource, PerformGradientAllReduce and PerformModelParallelTransfer are the
 * document's code, kept in seed_003_distributed_training.inc exactly as written (only the line
 * breaks and spaces lost in extraction restored). This file adds what the document leaves out:
 * main, argument parsing, the device buffers and the check of every result.
 *
 * The document writes a dialect real CANN rejects (hcclInit, hcclAllReduce with an aclDataType,
 * hcclBroadcast with separate send/receive buffers, get_data_type_size): the Makefile puts
 * npu-emu's opt-in compatibility layer (headers/compat/include) ahead of the real headers.
 *
 * Each rank (one process; `npu-emu run -n N ./distributed_training`):
 *   1. InitDistributedResource(ASCEND_DEVICE_ID, RANK_ID, RANK_SIZE)  (hcclInit forms the group)
 *   2. gradient AllReduce of fp16 data, in place: rank r holds g[i] = (r + 1) * (1 + i % 16), so
 *      every rank must end with N(N+1)/2 * (1 + i % 16) (small integers, exact in fp16);
 *   3. broadcast from --root: rank r's send buffer holds r * 64 + i % 64, every receive buffer
 *      starts at -1 and must end with root * 64 + i % 64; the root's send buffer is unchanged.
 * It prints PASS, or the first wrong element, and exits 1 on any wrong answer or failed call.
 *
 * Options: --count N      elements per buffer (default 65536)
 *          --root R       root of the broadcast (default 0)
 *          --wrong-rank R rank R adds 1 to its gradient (a deliberate error: every rank must FAIL)
 */
#include "seed_003_distributed_training.inc"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

#define CHECK_ACL(call)                                                                            \
    do {                                                                                           \
        aclError err_ = (call);                                                                    \
        if (err_ != ACL_SUCCESS) {                                                                 \
            const char *msg_ = aclGetRecentErrMsg();                                               \
            std::fprintf(stderr, "FAIL: %s returned %d: %s\n", #call, static_cast<int>(err_),      \
                         msg_ != nullptr ? msg_ : "(no message)");                                 \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

int Usage(const char *why)
{
    std::fprintf(stderr,
                 "distributed_training: %s\n"
                 "usage: npu-emu run -n N ./distributed_training [--count N] [--root R] [--wrong-rank R]\n",
                 why);
    return 2;
}

bool ParseInt(const char *s, long lo, long hi, long *out)
{
    char *end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        return false;
    }
    *out = v;
    return true;
}

long EnvLong(const char *name, long dflt)
{
    const char *v = std::getenv(name);
    long out = dflt;
    return (v != nullptr && ParseInt(v, 0, 1 << 20, &out)) ? out : dflt;
}

/* Copies `n` fp16 values to a new device buffer. */
void *Upload(const std::vector<aclFloat16> &host)
{
    void *dev = nullptr;
    const size_t bytes = host.size() * sizeof(aclFloat16);
    CHECK_ACL(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    return dev;
}

/* Downloads `dev` and compares it with want(i); prints the verdict. */
template <class F> bool Check(const char *what, int rank, void *dev, size_t n, F want)
{
    std::vector<aclFloat16> host(n);
    const size_t bytes = n * sizeof(aclFloat16);
    CHECK_ACL(aclrtMemcpy(host.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    size_t wrong = 0;
    size_t first = 0;
    for (size_t i = 0; i < n; ++i) {
        if (aclFloat16ToFloat(host[i]) != want(i)) {
            if (wrong++ == 0) {
                first = i;
            }
        }
    }
    if (wrong != 0) {
        std::printf("rank %d: %s: FAIL: %zu of %zu elements wrong; element %zu is %g, expected %g\n", rank, what,
                    wrong, n, first, static_cast<double>(aclFloat16ToFloat(host[first])),
                    static_cast<double>(want(first)));
        return false;
    }
    std::printf("rank %d: %s: ok [%g %g %g %g ...]\n", rank, what, static_cast<double>(aclFloat16ToFloat(host[0])),
                static_cast<double>(aclFloat16ToFloat(host[1 % n])), static_cast<double>(aclFloat16ToFloat(host[2 % n])),
                static_cast<double>(aclFloat16ToFloat(host[3 % n])));
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    long count = 65536;
    long root = 0;
    long wrongRank = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        long *dst = a == "--count" ? &count : a == "--root" ? &root : a == "--wrong-rank" ? &wrongRank : nullptr;
        if (dst == nullptr) {
            return Usage(("unknown argument " + a).c_str());
        }
        if (i + 1 >= argc || !ParseInt(argv[i + 1], 0, 1L << 28, dst)) {
            return Usage((a + " needs a non-negative number").c_str());
        }
        ++i;
    }
    if (count < 1) {
        return Usage("--count must be at least 1");
    }

    const char *rankEnv = std::getenv("RANK_ID");
    const char *sizeEnv = std::getenv("RANK_SIZE");
    if (rankEnv == nullptr || sizeEnv == nullptr) {
        return Usage("RANK_ID and RANK_SIZE are not set: start the ranks with `npu-emu run -n N`");
    }
    const int32_t rankId = static_cast<int32_t>(EnvLong("RANK_ID", -1));
    const int32_t worldSize = static_cast<int32_t>(EnvLong("RANK_SIZE", -1));
    const int32_t deviceId = static_cast<int32_t>(EnvLong("ASCEND_DEVICE_ID", rankId)); /* the document: usually rankId */
    if (root >= worldSize) {
        return Usage(("--root " + std::to_string(root) + " is not a rank of " + std::to_string(worldSize)).c_str());
    }

    /* The document's step 1: ACL, device, context, stream and the HCCL group. */
    if (!InitDistributedResource(deviceId, rankId, worldSize)) {
        std::printf("rank %d: FAIL: InitDistributedResource\n", rankId);
        return 1;
    }

    const size_t n = static_cast<size_t>(count);
    const size_t bytes = n * sizeof(aclFloat16);
    bool ok = true;

    /* Step 2: data-parallel gradient synchronisation (fp16, in place). */
    std::vector<aclFloat16> grad(n);
    for (size_t i = 0; i < n; ++i) {
        grad[i] = aclFloatToFloat16(static_cast<float>((rankId + 1) * (1 + static_cast<long>(i % 16))));
    }
    if (rankId == wrongRank) {
        grad[n / 2] = aclFloatToFloat16(aclFloat16ToFloat(grad[n / 2]) + 1.0f);
    }
    void *device_local_gradient_ptr = Upload(grad);
    if (!PerformGradientAllReduce(device_local_gradient_ptr, bytes, ACL_FLOAT16, hcclComm_, stream_)) {
        std::printf("rank %d: FAIL: PerformGradientAllReduce\n", rankId);
        return 1;
    }
    const float ranksSum = static_cast<float>(worldSize) * static_cast<float>(worldSize + 1) / 2.0f;
    ok &= Check("gradient AllReduce (sum over ranks, fp16, in place)", rankId, device_local_gradient_ptr, n,
                [&](size_t i) { return ranksSum * static_cast<float>(1 + i % 16); });

    /* Step 3: model-parallel transfer, a broadcast from `root` with separate buffers. */
    std::vector<aclFloat16> send(n);
    std::vector<aclFloat16> recv(n, aclFloatToFloat16(-1.0f));
    for (size_t i = 0; i < n; ++i) {
        send[i] = aclFloatToFloat16(static_cast<float>(rankId * 64 + static_cast<long>(i % 64)));
    }
    void *sendBuffer = Upload(send);
    void *recvBuffer = Upload(recv);
    if (!PerformModelParallelTransfer(sendBuffer, bytes, recvBuffer, bytes, ACL_FLOAT16, static_cast<int32_t>(root),
                                      hcclComm_, stream_)) {
        std::printf("rank %d: FAIL: PerformModelParallelTransfer\n", rankId);
        return 1;
    }
    const std::string what = "broadcast from rank " + std::to_string(root) + " (recvBuffer)";
    ok &= Check(what.c_str(), rankId, recvBuffer, n,
                [&](size_t i) { return static_cast<float>(root * 64 + static_cast<long>(i % 64)); });
    ok &= Check("sendBuffer unchanged", rankId, sendBuffer, n,
                [&](size_t i) { return static_cast<float>(rankId * 64 + static_cast<long>(i % 64)); });

    CHECK_ACL(aclrtFree(device_local_gradient_ptr));
    CHECK_ACL(aclrtFree(sendBuffer));
    CHECK_ACL(aclrtFree(recvBuffer));
    if (HcclCommDestroy(hcclComm_) != HCCL_SUCCESS) {
        std::printf("rank %d: FAIL: HcclCommDestroy\n", rankId);
        return 1;
    }
    CHECK_ACL(aclrtDestroyStream(stream_));
    CHECK_ACL(aclrtDestroyContext(context_));
    CHECK_ACL(aclrtResetDevice(deviceId));
    CHECK_ACL(aclFinalize());

    if (!ok) {
        std::printf("rank %d: FAIL\n", rankId);
        return 1;
    }
    std::printf("rank %d: PASS (%d ranks, %zu fp16 elements: gradient AllReduce and broadcast from rank %ld)\n", rankId,
                worldSize, n, root);
    return 0;
}
