/*
 * The host program of seed document 000 ("手撸一个分布式累加 demo"), run as a complete, self-checking
 * job. RunDistributedFlow is the document's code, kept in seed_000_run_distributed_flow.inc exactly
 * as written (only the indentation lost in extraction restored). This file supplies what the
 * document assumes exists, around it:
 *
 *   - comm, x_dev, y_dev, z_dev and count ("假设我们已经通过 rank_table 构建好了 HcclComm comm":
 *     the communicator comes from the rank table, HcclCommInitClusterInfo(RANK_TABLE_FILE, ...));
 *   - RunAddCustom(stream, x_dev, y_dev, z_dev), which launches the AddCustom Ascend C kernel
 *     (add_custom.cpp) on the stream: ACLRT_LAUNCH_KERNEL(add_custom)(blockDim, stream, x, y, z);
 *   - main, the options, the input data, and the check of the result.
 *
 * Rank r fills x and y with r + 1, so its kernel computes 2(r + 1) (rank 0: 1+1, rank 1: 2+2);
 * the in-place HcclAllReduce(HCCL_SUM) then leaves sum over r of 2(r + 1) = N(N + 1) in every
 * element of every rank: 6 at 2 ranks, 72 at 8 (exact in fp16). Each rank prints its first
 * outputs and PASS, or the first wrong element and FAIL (exit code 1).
 *
 * The document writes HCCL_SUM, which real CANN does not define (it is HCCL_REDUCE_SUM): the
 * Makefile puts npu-emu's opt-in compatibility layer (headers/compat/include) ahead of the real
 * headers.
 *
 * Options: --wrong-rank R   rank R fills x with R + 2 instead of R + 1 (a deliberate error: every
 *                           rank must then report FAIL and exit 1)
 */
#include "hccl/hccl.h"
#include "acl/acl.h"

#include "aclrtlaunch_add_custom.h" // generated from add_custom.cpp (npu-emu ascendc-stub)
#include "add_custom_shape.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

#define CHECK_HCCL(call)                                                                           \
    do {                                                                                           \
        HcclResult ret_ = (call);                                                                  \
        if (ret_ != HCCL_SUCCESS) {                                                                \
            std::fprintf(stderr, "FAIL: %s returned %d (%s)\n", #call, static_cast<int>(ret_),     \
                         HcclGetErrorString(ret_));                                                \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

/* What the document's RunDistributedFlow assumes already exists. */
static HcclComm comm = nullptr;
static void *x_dev = nullptr;
static void *y_dev = nullptr;
static void *z_dev = nullptr;
static uint64_t count = TOTAL_LENGTH;

/* z = x + y on the AI cores, enqueued on `stream` (the kernel runs when the stream reaches it). */
static void RunAddCustom(aclrtStream stream, void *x, void *y, void *z)
{
    const uint32_t ret = ACLRT_LAUNCH_KERNEL(add_custom)(USE_CORE_NUM, stream, x, y, z);
    if (ret != ACL_SUCCESS) {
        const char *msg = aclGetRecentErrMsg();
        std::fprintf(stderr, "FAIL: launching add_custom returned %u: %s\n", ret,
                     msg != nullptr ? msg : "(no message)");
        std::exit(1);
    }
}

#include "seed_000_run_distributed_flow.inc"

static int Usage(const char *why)
{
    std::fprintf(stderr,
                 "distributed_add: %s\n"
                 "usage: npu-emu run -n N ./distributed_add [--wrong-rank R]\n",
                 why);
    return 2;
}

static bool ParseInt(const char *s, long lo, long hi, long *out)
{
    if (s == nullptr) {
        return false;
    }
    char *end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        return false;
    }
    *out = v;
    return true;
}

static void *UploadFilled(float value)
{
    const size_t bytes = count * sizeof(aclFloat16);
    std::vector<aclFloat16> host(count, aclFloatToFloat16(value));
    void *dev = nullptr;
    CHECK_ACL(aclrtMalloc(&dev, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(dev, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    return dev;
}

int main(int argc, char **argv)
{
    long wrongRank = -1;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--wrong-rank") == 0 && i + 1 < argc &&
            ParseInt(argv[i + 1], 0, 1 << 20, &wrongRank)) {
            ++i;
        } else {
            return Usage((std::string("bad argument ") + argv[i]).c_str());
        }
    }
    const char *rankTable = std::getenv("RANK_TABLE_FILE");
    long rank = -1;
    long nranks = -1;
    if (rankTable == nullptr || std::getenv("RANK_ID") == nullptr || std::getenv("RANK_SIZE") == nullptr ||
        !ParseInt(std::getenv("RANK_ID"), 0, 4095, &rank) || !ParseInt(std::getenv("RANK_SIZE"), 1, 4096, &nranks) ||
        rank >= nranks) {
        return Usage("RANK_TABLE_FILE, RANK_ID and RANK_SIZE must describe this rank: start the ranks with "
                     "`npu-emu run -n N ./distributed_add`");
    }
    long device = rank;
    if (std::getenv("ASCEND_DEVICE_ID") != nullptr && !ParseInt(std::getenv("ASCEND_DEVICE_ID"), 0, 4095, &device)) {
        return Usage("ASCEND_DEVICE_ID is not a device number");
    }

    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(static_cast<int32_t>(device)));
    aclrtStream stream = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    CHECK_HCCL(HcclCommInitClusterInfo(rankTable, static_cast<uint32_t>(rank), &comm));

    /* Rank 0 computes 1+1, rank 1 computes 2+2, ... */
    const float mine = static_cast<float>(rank + 1);
    x_dev = UploadFilled(rank == wrongRank ? mine + 1.0f : mine);
    y_dev = UploadFilled(mine);
    z_dev = UploadFilled(-1.0f);

    RunDistributedFlow(stream, static_cast<int>(rank), static_cast<int>(nranks));

    /* "... 后续数据回传与校验 ...": copy the result back and check it. The document does not look
     * at aclrtSynchronizeStream's result; a failed kernel or collective shows up here. */
    CHECK_ACL(aclrtSynchronizeStream(stream));
    std::vector<aclFloat16> z(count);
    const size_t bytes = count * sizeof(aclFloat16);
    CHECK_ACL(aclrtMemcpy(z.data(), bytes, z_dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    const float want = static_cast<float>(nranks * (nranks + 1));
    uint64_t wrong = 0;
    uint64_t first = 0;
    for (uint64_t i = 0; i < count; ++i) {
        if (aclFloat16ToFloat(z[i]) != want) {
            if (wrong++ == 0) {
                first = i;
            }
        }
    }
    std::string head;
    for (uint64_t i = 0; i < 8 && i < count; ++i) {
        head += " " + std::to_string(static_cast<long>(aclFloat16ToFloat(z[i])));
    }
    std::printf("rankId: %ld, z: [%s ... ]\n", rank, head.c_str());
    if (wrong != 0) {
        std::printf("rank %ld: FAIL: %llu of %llu elements wrong; element %llu is %g, expected %g\n", rank,
                    static_cast<unsigned long long>(wrong), static_cast<unsigned long long>(count),
                    static_cast<unsigned long long>(first), static_cast<double>(aclFloat16ToFloat(z[first])),
                    static_cast<double>(want));
    } else {
        std::printf("rank %ld: PASS (add_custom on %u AI cores, then HcclAllReduce sum of %llu fp16 over %ld ranks: "
                    "every element is %g)\n",
                    rank, USE_CORE_NUM, static_cast<unsigned long long>(count), nranks, static_cast<double>(want));
    }

    CHECK_ACL(aclrtFree(x_dev));
    CHECK_ACL(aclrtFree(y_dev));
    CHECK_ACL(aclrtFree(z_dev));
    CHECK_HCCL(HcclCommDestroy(comm));
    CHECK_ACL(aclrtDestroyStream(stream));
    CHECK_ACL(aclrtResetDevice(static_cast<int32_t>(device)));
    CHECK_ACL(aclFinalize());
    return wrong == 0 ? 0 : 1;
}
