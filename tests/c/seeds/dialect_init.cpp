// The compatibility layer's hcclInit (headers/compat/include/hccl/hccl.h), built with that
// directory ahead of the real headers. argv[1] picks the case:
//
//   bad-args   (one process)  rank >= size, rank < 0, size < 1, NULL comm/group, a group name that
//                             is not a file name: each must return the documented code
//   no-job     (one process, NPU_EMU_JOB_ID unset)  size 2 is HCCL_E_PARA; size 1 works, and
//              the rest of the dialect is checked on it
//   threads    (one process, NPU_EMU_JOB_ID set)  ranks 0 and 1 of a group as two threads
//   no-root    (launcher, 2 ranks, HCCL_CONNECT_TIMEOUT=1)  rank 0 never calls hcclInit: rank 1
//              gets HCCL_E_TIMEOUT
//   mismatch   (launcher, 2 ranks)  rank 1 passes size 3: HCCL_E_PARA on rank 1, exit 1
//   groups     (launcher or RANK_ID/RANK_SIZE)  two groups at once, then one of them formed
//              again after HcclCommDestroy; an AllReduce checks each communicator, and rank 0
//              checks that its rendezvous file is gone
//   plant DIR  write a record whose writer has exited (stale) as DIR/hcclInit.g.0
//
// Prints "dialect_init: ok" and exits 0 when every check holds; otherwise exits 1.
#include "hccl/hccl.h"

#include <sys/wait.h>

#include <atomic>
#include <thread>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static std::atomic<int> failures{0};

static void Expect(const char *what, HcclResult got, HcclResult want)
{
    std::printf("%s: %d (expected %d)\n", what, static_cast<int>(got), static_cast<int>(want));
    if (got != want) {
        ++failures;
    }
}

static int EnvInt(const char *name, int dflt)
{
    const char *v = std::getenv(name);
    return (v != nullptr && *v != '\0') ? std::atoi(v) : dflt;
}

static void SetDevice(int rank)
{
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(EnvInt("ASCEND_DEVICE_ID", rank)) != ACL_SUCCESS) {
        std::printf("FAIL: device setup: %s\n", aclGetRecentErrMsg());
        std::exit(1);
    }
}

// AllReduce (sum) of `rank + 1 + salt` over the communicator, checked against the formula.
static void CheckComm(const char *name, HcclComm comm, int salt)
{
    uint32_t rank = 0;
    uint32_t size = 0;
    if (HcclGetRankId(comm, &rank) != HCCL_SUCCESS || HcclGetRankSize(comm, &size) != HCCL_SUCCESS) {
        std::printf("FAIL: %s: HcclGetRankId/Size\n", name);
        ++failures;
        return;
    }
    const size_t n = 1000;
    std::vector<int32_t> host(n, static_cast<int32_t>(rank + 1 + salt));
    void *buf = nullptr;
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMalloc(&buf, n * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(buf, n * 4, host.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    const HcclResult r = hcclAllReduce(buf, buf, n, ACL_INT32, HCCL_SUM, comm, stream);
    const aclError s = aclrtSynchronizeStream(stream);
    aclrtMemcpy(host.data(), n * 4, buf, n * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    aclrtFree(buf);
    aclrtDestroyStream(stream);
    const int32_t want = static_cast<int32_t>(size * (size + 1) / 2 + size * salt);
    bool ok = r == HCCL_SUCCESS && s == ACL_SUCCESS;
    for (size_t i = 0; i < n && ok; ++i) {
        ok = host[i] == want;
    }
    std::printf("%s: rank %u/%u allreduce %s (element 0 = %d, expected %d)\n", name, rank, size,
                ok ? "ok" : "WRONG", host[0], want);
    if (!ok) {
        ++failures;
    }
}

// The rest of the dialect on a one-rank communicator (nothing waits for a peer, so calls that
// fail on this rank only cannot hang): separate-buffer broadcast, the aclDataType translation and
// its errors, get_data_type_size.
static void SoloDialectChecks(HcclComm comm)
{
    const size_t n = 64;
    std::vector<int32_t> src(n);
    for (size_t i = 0; i < n; ++i) {
        src[i] = static_cast<int32_t>(i * 3);
    }
    std::vector<int32_t> dst(n, -1);
    void *send = nullptr;
    void *recv = nullptr;
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    aclrtMalloc(&send, n * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&recv, n * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(send, n * 4, src.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(recv, n * 4, dst.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    Expect("hcclBroadcast send -> recv", hcclBroadcast(send, recv, n, ACL_INT32, 0, comm, stream), HCCL_SUCCESS);
    aclrtSynchronizeStream(stream);
    aclrtMemcpy(dst.data(), n * 4, recv, n * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    Expect("broadcast result", dst == src ? HCCL_SUCCESS : HCCL_E_INTERNAL, HCCL_SUCCESS);
    Expect("hcclBroadcast NULL send on the root", hcclBroadcast(nullptr, recv, n, ACL_INT32, 0, comm, stream),
           HCCL_E_PTR);
    Expect("hcclAllReduce ACL_STRING", hcclAllReduce(send, recv, n, ACL_STRING, HCCL_SUM, comm, stream), HCCL_E_PARA);
    Expect("hcclBroadcast ACL_BOOL", hcclBroadcast(send, recv, n, ACL_BOOL, 0, comm, stream), HCCL_E_PARA);
    Expect("get_data_type_size(ACL_FLOAT16) == 2", get_data_type_size(ACL_FLOAT16) == 2 ? HCCL_SUCCESS : HCCL_E_PARA,
           HCCL_SUCCESS);
    Expect("get_data_type_size(ACL_STRING) == SIZE_MAX",
           get_data_type_size(ACL_STRING) == SIZE_MAX ? HCCL_SUCCESS : HCCL_E_PARA, HCCL_SUCCESS);
    aclrtFree(send);
    aclrtFree(recv);
    aclrtDestroyStream(stream);
}

int main(int argc, char **argv)
{
    const std::string mode = argc > 1 ? argv[1] : "";
    const int rank = EnvInt("RANK_ID", 0);
    const int size = EnvInt("RANK_SIZE", 1);
    HcclComm comm = nullptr;

    if (mode == "bad-args") {
        SetDevice(0);
        Expect("rank 2 size 2", hcclInit(2, 2, "g", &comm), HCCL_E_PARA);
        Expect("rank -1 size 2", hcclInit(-1, 2, "g", &comm), HCCL_E_PARA);
        Expect("rank 0 size 0", hcclInit(0, 0, "g", &comm), HCCL_E_PARA);
        Expect("NULL comm", hcclInit(0, 1, "g", nullptr), HCCL_E_PTR);
        Expect("NULL group", hcclInit(0, 1, nullptr, &comm), HCCL_E_PTR);
        Expect("group a/b", hcclInit(0, 1, "a/b", &comm), HCCL_E_PARA);
        Expect("group empty", hcclInit(0, 1, "", &comm), HCCL_E_PARA);
        Expect("comm untouched", comm == nullptr ? HCCL_SUCCESS : HCCL_E_INTERNAL, HCCL_SUCCESS);
        setenv("NPU_EMU_JOB_ID", "bad/id", 1);
        Expect("NPU_EMU_JOB_ID bad/id", hcclInit(1, 2, "g", &comm), HCCL_E_PARA);
        setenv("NPU_EMU_JOB_ID", "job1", 1);
        setenv("HCCL_CONNECT_TIMEOUT", "soon", 1);
        Expect("HCCL_CONNECT_TIMEOUT soon", hcclInit(1, 2, "g", &comm), HCCL_E_PARA);
        unsetenv("HCCL_CONNECT_TIMEOUT");
        unsetenv("NPU_EMU_JOB_ID");
    } else if (mode == "no-job") {
        SetDevice(0);
        Expect("size 2 without NPU_EMU_JOB_ID", hcclInit(0, 2, "g", &comm), HCCL_E_PARA);
        Expect("size 1 without NPU_EMU_JOB_ID", hcclInit(0, 1, "solo", &comm), HCCL_SUCCESS);
        if (comm != nullptr) {
            CheckComm("solo", comm, 0);
            SoloDialectChecks(comm);
            HcclCommDestroy(comm);
        }
    } else if (mode == "threads") {
        // Both ranks of a group in one process, one thread each (NPU_EMU_JOB_ID set by hand).
        if (aclInit(nullptr) != ACL_SUCCESS) {
            return 1;
        }
        std::vector<std::thread> threads;
        for (int r = 0; r < 2; ++r) {
            threads.emplace_back([r] {
                aclrtSetDevice(r);
                HcclComm c = nullptr;
                Expect(r == 0 ? "thread rank 0 hcclInit" : "thread rank 1 hcclInit", hcclInit(r, 2, "t", &c),
                       HCCL_SUCCESS);
                if (c != nullptr) {
                    CheckComm("t", c, 0);
                    HcclCommDestroy(c);
                }
                aclrtResetDevice(r);
            });
        }
        for (auto &t : threads) {
            t.join();
        }
    } else if (mode == "no-root") {
        // Rank 0 never calls hcclInit: rank 1 must time out (HCCL_CONNECT_TIMEOUT) and say why.
        if (rank == 0) {
            return 0;
        }
        SetDevice(rank);
        Expect("hcclInit without rank 0", hcclInit(rank, 2, "g", &comm), HCCL_E_TIMEOUT);
    } else if (mode == "mismatch") {
        SetDevice(rank);
        const HcclResult r = hcclInit(rank, rank == 1 ? 3 : 2, "g", &comm);
        std::printf("rank %d: hcclInit returned %d\n", rank, static_cast<int>(r));
        if (rank == 1 && r == HCCL_E_PARA) {
            std::printf("rank 1: size mismatch reported as HCCL_E_PARA\n");
        }
        return 1; // either way the job must not pass
    } else if (mode == "groups") {
        SetDevice(rank);
        HcclComm a = nullptr;
        HcclComm b = nullptr;
        Expect("hcclInit group_a", hcclInit(rank, size, "group_a", &a), HCCL_SUCCESS);
        Expect("hcclInit group_b", hcclInit(rank, size, "group_b", &b), HCCL_SUCCESS);
        if (a != nullptr && b != nullptr) {
            CheckComm("group_a", a, 0);
            CheckComm("group_b", b, 10);
            HcclCommDestroy(a);
            HcclCommDestroy(b);
        }
        Expect("hcclInit group_a again", hcclInit(rank, size, "group_a", &a), HCCL_SUCCESS);
        if (a != nullptr) {
            CheckComm("group_a again", a, 100);
            HcclCommDestroy(a);
        }
        if (rank == 0) {
            const char *node = std::getenv("NPU_EMU_NODE_DIR");
            const std::string dir = std::string(node != nullptr ? node : "") + "/jobs/" +
                                    (std::getenv("NPU_EMU_JOB_ID") != nullptr ? std::getenv("NPU_EMU_JOB_ID") : "");
            for (const char *f : {"/hcclInit.group_a.0", "/hcclInit.group_b.0", "/hcclInit.group_a.1"}) {
                if (access((dir + f).c_str(), F_OK) == 0) {
                    std::printf("FAIL: %s%s is still there\n", dir.c_str(), f);
                    ++failures;
                }
            }
        }
    } else if (mode == "plant" && argc > 2) {
        // A record written by a process that has exited, as an earlier job would leave it.
        const pid_t child = fork();
        if (child == 0) {
            _exit(0);
        }
        waitpid(child, nullptr, 0);
        npuemu_compat::RendezvousRecord rec;
        std::memset(&rec, 0x5a, sizeof rec);
        std::memcpy(rec.magic, npuemu_compat::kMagic, sizeof npuemu_compat::kMagic);
        rec.size = 2;
        rec.pid = child;
        rec.startTime = 12345;
        const std::string path = std::string(argv[2]) + "/hcclInit.g.0";
        if (npuemu_compat::PublishRecord(path, rec) != 0) {
            std::printf("FAIL: cannot write %s\n", path.c_str());
            return 1;
        }
        std::printf("planted %s (pid %d, exited)\n", path.c_str(), static_cast<int>(child));
        return 0;
    } else if (mode == "stale") {
        SetDevice(rank);
        if (rank == 0) {
            usleep(300 * 1000); // let rank 1 find the planted record first
        }
        Expect("hcclInit g", hcclInit(rank, size, "g", &comm), HCCL_SUCCESS);
        if (comm != nullptr) {
            CheckComm("g", comm, 0);
            HcclCommDestroy(comm);
        }
    } else {
        std::printf("usage: dialect_init bad-args|no-job|threads|no-root|mismatch|groups|plant DIR|stale\n");
        return 2;
    }
    aclFinalize();
    if (failures != 0) {
        std::printf("dialect_init: %d check(s) failed\n", failures.load());
        return 1;
    }
    std::printf("dialect_init: ok\n");
    return 0;
}
