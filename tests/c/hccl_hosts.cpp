// HCCL jobs over several emulated hosts, for the fault tests. Usage:
//   hccl_hosts loop ROOTINFO_FILE   AllReduce of 1 MiB of floats in a loop, each result
//                                   checked; prints "rank R: iteration K ok" (K = 1, 2, …);
//                                   stops after LOOP_ITERS iterations (default: never)
//   hccl_hosts late-send ROOTINFO_FILE
//                                   the last rank destroys its communicator at once (and
//                                   creates ROOTINFO_FILE.gone); rank 1 waits for that, 1 s
//                                   more, then HcclSend 1 MiB to rank 0, whose HcclRecv was
//                                   waiting all along; rank 0 checks every element and
//                                   prints "rank 0: received from rank 1 after rank N left: ok"
// Ranks come from RANK_ID/RANK_SIZE (or OMPI_COMM_WORLD_*, SLURM_PROCID/SLURM_NTASKS); the
// device from ASCEND_DEVICE_ID (else SLURM_LOCALID, else rank % devices). With
// RANK_TABLE_FILE set the communicator comes from the table, else from the root info that
// rank 0 writes to ROOTINFO_FILE. A failing call prints "rank R: CALL -> CODE: MESSAGE"
// and the rank exits 3 (after HOLD_AFTER_FAILURE seconds, default 0: a root-info root
// stays up that long).
#include <acl/acl.h>
#include <hccl/hccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

static int rank_ = -1;

static int env_int(const char *k, int dflt) {
    const char *v = getenv(k);
    return v && *v ? atoi(v) : dflt;
}

static void report(const char *call, int code) {
    const char *m = aclGetRecentErrMsg();
    printf("rank %d: %s -> %d: %s\n", rank_, call, code, m ? m : "(no message)");
    fflush(stdout);
    int hold = env_int("HOLD_AFTER_FAILURE", 0);
    if (hold > 0) sleep(hold);
}
#define CHECK(call)                                                \
    do {                                                           \
        int e_ = (call);                                           \
        if (e_ != 0) { report(#call, e_); exit(3); }               \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: hccl_hosts loop|late-send ROOTINFO_FILE\n"); return 2; }
    std::string scenario = argv[1];
    const char *root_file = argv[2];
    rank_ = env_int("RANK_ID", env_int("OMPI_COMM_WORLD_RANK", env_int("SLURM_PROCID", -1)));
    int n = env_int("RANK_SIZE", env_int("OMPI_COMM_WORLD_SIZE", env_int("SLURM_NTASKS", -1)));
    if (rank_ < 0 || n < 1) { fprintf(stderr, "set RANK_ID and RANK_SIZE\n"); return 2; }
    CHECK(aclInit(nullptr));
    uint32_t ndev = 0;
    CHECK(aclrtGetDeviceCount(&ndev));
    int dev = env_int("ASCEND_DEVICE_ID", env_int("SLURM_LOCALID", rank_ % (int)ndev));
    CHECK(aclrtSetDevice(dev));
    HcclComm comm;
    const char *table = getenv("RANK_TABLE_FILE");
    if (table && *table) {
        CHECK(HcclCommInitClusterInfo(table, rank_, &comm));
    } else {
        HcclRootInfo ri;
        if (rank_ == 0) {
            CHECK(HcclGetRootInfo(&ri));
            std::string tmp = std::string(root_file) + ".tmp";
            FILE *f = fopen(tmp.c_str(), "wb");
            if (!f || fwrite(&ri, sizeof ri, 1, f) != 1) return 2;
            fclose(f);
            rename(tmp.c_str(), root_file);
        } else {
            FILE *f = nullptr;
            for (int i = 0; i < 6000 && !(f = fopen(root_file, "rb")); i++) usleep(10000);
            if (!f || fread(&ri, sizeof ri, 1, f) != 1) { fprintf(stderr, "cannot read %s\n", root_file); return 2; }
            fclose(f);
        }
        CHECK(HcclCommInitRootInfo(n, &ri, rank_, &comm));
    }
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    if (scenario == "loop") {
        // LOOP_COUNT elements (default 256 Ki: the large path); a few elements complete at
        // the call, their inputs travelling with the fingerprints.
        const size_t count = (size_t)env_int("LOOP_COUNT", 256 * 1024);
        std::vector<float> host(count);
        void *buf = nullptr;
        CHECK(aclrtMalloc(&buf, count * 4, ACL_MEM_MALLOC_HUGE_FIRST));
        long iters = env_int("LOOP_ITERS", -1);
        for (long k = 1; iters < 0 || k <= iters; k++) {
            for (size_t i = 0; i < count; i++) host[i] = (float)((rank_ + i + k) % 7);
            CHECK(aclrtMemcpy(buf, count * 4, host.data(), count * 4, ACL_MEMCPY_HOST_TO_DEVICE));
            CHECK(HcclAllReduce(buf, buf, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
            CHECK(aclrtSynchronizeStream(s));
            CHECK(aclrtMemcpy(host.data(), count * 4, buf, count * 4, ACL_MEMCPY_DEVICE_TO_HOST));
            for (size_t i = 0; i < count; i += count > 4099 ? 4099 : 1) {
                float want = 0;
                for (int r = 0; r < n; r++) want += (float)((r + i + k) % 7);
                if (host[i] != want) {
                    printf("rank %d: iteration %ld: element %zu is %g, expected %g\n", rank_, k, i, host[i], want);
                    return 1;
                }
            }
            printf("rank %d: iteration %ld ok\n", rank_, k);
            fflush(stdout);
        }
        CHECK(aclrtFree(buf));
    } else if (scenario == "late-send") {
        std::string gone = std::string(root_file) + ".gone";
        if (rank_ == n - 1) {
            CHECK(aclrtDestroyStream(s));
            CHECK(HcclCommDestroy(comm));
            FILE *f = fopen(gone.c_str(), "w");
            if (f) fclose(f);
            printf("rank %d: destroyed its communicator\n", rank_);
            CHECK(aclrtResetDevice(dev));
            CHECK(aclFinalize());
            return 0;
        }
        const size_t count = 256 * 1024;
        std::vector<float> host(count);
        void *buf = nullptr;
        CHECK(aclrtMalloc(&buf, count * 4, ACL_MEM_MALLOC_HUGE_FIRST));
        if (rank_ == 1) {
            for (int i = 0; i < 6000 && access(gone.c_str(), F_OK) != 0; i++) usleep(10000);
            // Rank 0's receive keeps waiting meanwhile, the last rank gone.
            sleep(1);
            for (size_t i = 0; i < count; i++) host[i] = (float)(i % 1000) + 0.5f;
            CHECK(aclrtMemcpy(buf, count * 4, host.data(), count * 4, ACL_MEMCPY_HOST_TO_DEVICE));
            CHECK(HcclSend(buf, count, HCCL_DATA_TYPE_FP32, 0, comm, s));
            CHECK(aclrtSynchronizeStream(s));
        } else if (rank_ == 0) {
            CHECK(HcclRecv(buf, count, HCCL_DATA_TYPE_FP32, 1, comm, s));
            CHECK(aclrtSynchronizeStream(s));
            CHECK(aclrtMemcpy(host.data(), count * 4, buf, count * 4, ACL_MEMCPY_DEVICE_TO_HOST));
            for (size_t i = 0; i < count; i++) {
                if (host[i] != (float)(i % 1000) + 0.5f) {
                    printf("rank 0: element %zu is %g, expected %g\n", i, host[i], (float)(i % 1000) + 0.5f);
                    return 1;
                }
            }
            printf("rank 0: received from rank 1 after rank %d left: ok\n", n - 1);
        }
        CHECK(aclrtFree(buf));
    } else {
        fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
        return 2;
    }
    CHECK(aclrtDestroyStream(s));
    CHECK(HcclCommDestroy(comm));
    CHECK(aclrtResetDevice(dev));
    CHECK(aclFinalize());
    printf("rank %d: done\n", rank_);
    return 0;
}
