/*
 * HCCL sample: AllReduce (sum) of fp32 data across ranks, with the result checked on every rank.
 *
 * Two ways to run, both unchanged on CANN and on npu-emu:
 *
 *  - One process per rank, with a rank table (what `npu-emu run -n 4 ./hccl_allreduce` and
 *    Ascend launchers set up): RANK_ID, RANK_SIZE and RANK_TABLE_FILE come from the
 *    environment, the device from ASCEND_DEVICE_ID (default: RANK_ID), and every rank calls
 *    HcclCommInitClusterInfo(RANK_TABLE_FILE, RANK_ID).
 *  - One process, one thread per device (the CANN 8.5 HCCL example style): started without
 *    RANK_TABLE_FILE, `./hccl_allreduce [NRANKS]` makes rank 0's root info with
 *    HcclGetRootInfo and each thread calls HcclCommInitRootInfo.
 *
 * Rank r contributes x[i] = (i % 1000) + r. The sum over N ranks, N * (i % 1000) + N(N-1)/2, is
 * a small integer, exact in fp32 whatever order the reduction adds in, so the check is strict.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define CHECK_ACL(call)                                                                       \
    do {                                                                                      \
        aclError err_ = (call);                                                               \
        if (err_ != ACL_SUCCESS) {                                                            \
            const char *msg_ = aclGetRecentErrMsg();                                          \
            std::fprintf(stderr, "FAIL: %s returned %d at %s:%d: %s\n", #call, (int)err_,     \
                         __FILE__, __LINE__, msg_ ? msg_ : "(no message)");                    \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

#define CHECK_HCCL(call)                                                                      \
    do {                                                                                      \
        HcclResult ret_ = (call);                                                             \
        if (ret_ != HCCL_SUCCESS) {                                                           \
            std::fprintf(stderr, "FAIL: %s returned %d (%s) at %s:%d\n", #call, (int)ret_,    \
                         HcclGetErrorString(ret_), __FILE__, __LINE__);                       \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

static const uint64_t kCount = 1u << 20; /* 1 Mi floats = 4 MiB per rank */

static int EnvInt(const char *name, int dflt)
{
    const char *v = std::getenv(name);
    return (v != nullptr && *v != '\0') ? std::atoi(v) : dflt;
}

/* Run the AllReduce on an initialised communicator and check the result; returns true on
 * success. The device of this thread is already set. */
static bool AllReduceAndCheck(HcclComm comm)
{
    uint32_t rank = 0;
    uint32_t nranks = 0;
    CHECK_HCCL(HcclGetRankId(comm, &rank));
    CHECK_HCCL(HcclGetRankSize(comm, &nranks));

    const size_t bytes = kCount * sizeof(float);
    std::vector<float> host(kCount);
    for (uint64_t i = 0; i < kCount; ++i) {
        host[i] = static_cast<float>(i % 1000 + rank);
    }

    aclrtStream stream = nullptr;
    void *sendBuf = nullptr;
    void *recvBuf = nullptr;
    CHECK_ACL(aclrtCreateStream(&stream));
    CHECK_ACL(aclrtMalloc(&sendBuf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMalloc(&recvBuf, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(sendBuf, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    /* The collective is enqueued on the stream; synchronize to wait for it. */
    CHECK_HCCL(HcclAllReduce(sendBuf, recvBuf, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm,
                             stream));
    CHECK_ACL(aclrtSynchronizeStream(stream));

    std::vector<float> out(kCount);
    CHECK_ACL(aclrtMemcpy(out.data(), bytes, recvBuf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));

    uint64_t wrong = 0;
    uint64_t firstWrong = 0;
    for (uint64_t i = 0; i < kCount; ++i) {
        const float want = static_cast<float>(nranks * (i % 1000) + nranks * (nranks - 1) / 2);
        if (out[i] != want) {
            if (wrong++ == 0) {
                firstWrong = i;
            }
        }
    }
    std::string head;
    for (int i = 0; i < 8; ++i) {
        head += " " + std::to_string(static_cast<long>(out[i]));
    }
    std::printf("rankId: %u, output: [%s ... ]\n", rank, head.c_str());
    if (wrong != 0) {
        const float want =
            static_cast<float>(nranks * (firstWrong % 1000) + nranks * (nranks - 1) / 2);
        std::printf("rank %u: FAIL: %llu of %llu elements wrong; element %llu is %g, expected %g\n",
                    rank, (unsigned long long)wrong, (unsigned long long)kCount,
                    (unsigned long long)firstWrong, out[firstWrong], want);
    } else {
        std::printf("rank %u: PASS (allreduce sum of %llu fp32 over %u ranks)\n", rank,
                    (unsigned long long)kCount, nranks);
    }

    CHECK_ACL(aclrtFree(sendBuf));
    CHECK_ACL(aclrtFree(recvBuf));
    CHECK_ACL(aclrtDestroyStream(stream));
    return wrong == 0;
}

/* One process per rank, initialised from the rank table. */
static int RunRankTable(const char *rankTable)
{
    const int rank = EnvInt("RANK_ID", -1);
    const int nranks = EnvInt("RANK_SIZE", -1);
    if (rank < 0 || nranks <= 0 || rank >= nranks) {
        std::fprintf(stderr, "FAIL: RANK_TABLE_FILE is set but RANK_ID=%d / RANK_SIZE=%d are not "
                             "a valid rank; start the ranks with `npu-emu run -n N`\n",
                     rank, nranks);
        return 1;
    }
    const int device = EnvInt("ASCEND_DEVICE_ID", rank);

    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(device));
    if (rank == 0) {
        uint32_t devices = 0;
        CHECK_ACL(aclrtGetDeviceCount(&devices));
        std::printf("Found %u NPU device(s) available; %d ranks from %s\n", devices, nranks,
                    rankTable);
    }
    HcclComm comm = nullptr;
    CHECK_HCCL(HcclCommInitClusterInfo(rankTable, static_cast<uint32_t>(rank), &comm));
    const bool ok = AllReduceAndCheck(comm);
    CHECK_HCCL(HcclCommDestroy(comm));
    CHECK_ACL(aclrtResetDevice(device));
    CHECK_ACL(aclFinalize());
    return ok ? 0 : 1;
}

/* One process, one thread per device, initialised from root info. */
static int RunThreads(int argc, char **argv)
{
    CHECK_ACL(aclInit(nullptr));
    uint32_t devices = 0;
    CHECK_ACL(aclrtGetDeviceCount(&devices));
    std::printf("Found %u NPU device(s) available\n", devices);
    uint32_t nranks = devices;
    if (argc > 1) {
        nranks = static_cast<uint32_t>(std::atoi(argv[1]));
    }
    if (nranks == 0 || nranks > devices) {
        std::fprintf(stderr, "FAIL: asked for %u ranks, but %u devices are available\n", nranks,
                     devices);
        return 1;
    }

    HcclRootInfo rootInfo;
    CHECK_ACL(aclrtSetDevice(0));
    CHECK_HCCL(HcclGetRootInfo(&rootInfo));

    std::vector<int> results(nranks, 0);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < nranks; ++r) {
        threads.emplace_back([&, r]() {
            CHECK_ACL(aclrtSetDevice(static_cast<int32_t>(r)));
            HcclComm comm = nullptr;
            CHECK_HCCL(HcclCommInitRootInfo(nranks, &rootInfo, r, &comm));
            results[r] = AllReduceAndCheck(comm) ? 1 : 0;
            CHECK_HCCL(HcclCommDestroy(comm));
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    for (uint32_t r = 0; r < nranks; ++r) {
        CHECK_ACL(aclrtResetDevice(static_cast<int32_t>(r)));
    }
    CHECK_ACL(aclFinalize());
    for (int ok : results) {
        if (!ok) {
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *rankTable = std::getenv("RANK_TABLE_FILE");
    if (rankTable != nullptr && *rankTable != '\0') {
        return RunRankTable(rankTable);
    }
    return RunThreads(argc, argv);
}
