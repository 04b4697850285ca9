// One rank of an HCCL job of the reliability suite (tests/tests/reliability.rs). Usage:
//   rel_job MODE [ARGS]   with RANK_ID / RANK_SIZE set, and either RANK_TABLE_FILE (the
//                         communicator comes from the rank table) or ROOT_FILE (rank 0 writes
//                         the root info there, the others read it).
// Modes:
//   loop ITERS COUNT      AllReduce (sum, int32, COUNT elements) ITERS times (0: forever);
//                         every element of rank r is JOB_TAG*100 + r + 1, so a result with
//                         another job's contributions is caught ("MIXED", exit 4). Prints
//                         "looping" once the first one succeeded.
//   steps                 a job's life step by step (init, device, malloc, comm, AllReduce
//                         small and large, destroy, free, finalize); before step $FILL_AT the
//                         file system of the node is filled through $FILL_FILE. Every step
//                         prints "step NAME -> CODE MESSAGE"; nothing may crash.
//   freed                 every rank queues an AllReduce behind a held stream; rank 0 frees
//                         its receive buffer (REALLOC=1: and allocates the same size again,
//                         at the same address) before the stream runs it.
//   held                  one AllReduce of 1 MiB; the last rank's stream is held until the
//                         file $GO_FILE exists (the test changes the control block meanwhile)
// A failing HCCL or ACL call prints "rank R: CALL -> CODE: MESSAGE" and exits 3.
#include <acl/acl.h>
#include <hccl/hccl.h>

#include <fcntl.h>
#include <semaphore.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

static int rank_, n_;

static const char *msg() {
    const char *m = aclGetRecentErrMsg();
    return m ? m : "(no message)";
}
#define CK(call)                                                                  \
    do {                                                                          \
        int e_ = (int)(call);                                                     \
        if (e_ != 0) {                                                            \
            printf("rank %d: %s -> %d: %s\n", rank_, #call, e_, msg());           \
            fflush(stdout);                                                       \
            exit(3);                                                              \
        }                                                                         \
    } while (0)

static void fill(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) { perror("open fill file"); exit(2); }
    static char block[1 << 16];
    memset(block, 7, sizeof block);
    for (size_t n = sizeof block; n >= 1;) {
        ssize_t w = write(fd, block, n);
        if (w < 0) {
            if (errno != ENOSPC) { perror("fill"); exit(2); }
            n /= 2;
        }
    }
    close(fd);
}

static int init_comm(HcclComm *comm) {
    const char *table = getenv("RANK_TABLE_FILE");
    if (table && *table) return HcclCommInitClusterInfo(table, rank_, comm);
    const char *file = getenv("ROOT_FILE");
    HcclRootInfo ri;
    if (rank_ == 0) {
        int e = HcclGetRootInfo(&ri);
        if (e) return e;
        std::string tmp = std::string(file) + ".tmp";
        FILE *f = fopen(tmp.c_str(), "wb");
        fwrite(&ri, sizeof ri, 1, f);
        fclose(f);
        rename(tmp.c_str(), file);
    } else {
        FILE *f = nullptr;
        for (int i = 0; i < 6000 && !(f = fopen(file, "rb")); i++) usleep(10000);
        if (!f || fread(&ri, sizeof ri, 1, f) != 1) { fprintf(stderr, "cannot read %s\n", file); exit(2); }
        fclose(f);
    }
    return HcclCommInitRootInfo(n_, &ri, rank_, comm);
}

static int loop(long iters, size_t count) {
    int tag = getenv("JOB_TAG") ? atoi(getenv("JOB_TAG")) : 0;
    CK(aclInit(nullptr));
    CK(aclrtSetDevice(rank_ % 8));
    aclrtStream s;
    CK(aclrtCreateStream(&s));
    HcclComm comm;
    CK(init_comm(&comm));
    void *d = nullptr;
    size_t bytes = count * 4;
    CK(aclrtMalloc(&d, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<int32_t> h(count, tag * 100 + rank_ + 1), back(count);
    int32_t want = n_ * tag * 100 + n_ * (n_ + 1) / 2;
    for (long i = 0; iters == 0 || i < iters; i++) {
        CK(aclrtMemcpy(d, bytes, h.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        CK(HcclAllReduce(d, d, count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
        CK(aclrtSynchronizeStream(s));
        CK(aclrtMemcpy(back.data(), bytes, d, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        for (size_t k = 0; k < count; k++) {
            if (back[k] != want) {
                printf("rank %d: MIXED: element %zu is %d, expected %d (job tag %d)\n", rank_, k,
                       back[k], want, tag);
                fflush(stdout);
                exit(4);
            }
        }
        if (i == 0) {
            printf("rank %d: looping\n", rank_);
            fflush(stdout);
        }
    }
    CK(HcclCommDestroy(comm));
    CK(aclrtFree(d));
    CK(aclrtDestroyStream(s));
    CK(aclFinalize());
    printf("rank %d: loop done\n", rank_);
    return 0;
}

static int steps() {
    const char *at = getenv("FILL_AT");
    const char *file = getenv("FILL_FILE");
    void *small = nullptr, *big = nullptr;
    aclrtStream s = nullptr;
    HcclComm comm = nullptr;
    int r = 0;
#define STEP(name, call)                                                              \
    do {                                                                              \
        if (at && file && rank_ == 0 && strcmp(at, name) == 0) fill(file);           \
        r = (int)(call);                                                              \
        if (r == -1)                                                                  \
            printf("rank %d: step %s -> skipped\n", rank_, name);                     \
        else                                                                          \
            printf("rank %d: step %s -> %d %s\n", rank_, name, r, r ? msg() : "");    \
        fflush(stdout);                                                               \
    } while (0)
    // Every rank passes the same steps (a failed step fails the later ones cleanly).
    STEP("init", aclInit(nullptr));
    STEP("device", aclrtSetDevice(rank_));
    STEP("stream", aclrtCreateStream(&s));
    STEP("malloc", aclrtMalloc(&small, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    STEP("mallocbig", aclrtMalloc(&big, 8 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    STEP("comm", init_comm(&comm));
    STEP("allreduce", (comm && small) ? HcclAllReduce(small, small, 1024, HCCL_DATA_TYPE_FP32,
                                                      HCCL_REDUCE_SUM, comm, s)
                                      : -1);
    STEP("allreducebig", (comm && big) ? HcclAllReduce(big, big, 2 << 20, HCCL_DATA_TYPE_FP32,
                                                       HCCL_REDUCE_SUM, comm, s)
                                       : -1);
    STEP("sync", s ? aclrtSynchronizeStream(s) : -1);
    STEP("destroy", comm ? HcclCommDestroy(comm) : -1);
    STEP("free", small ? aclrtFree(small) : -1);
    STEP("freebig", big ? aclrtFree(big) : -1);
    STEP("finalize", aclFinalize());
    printf("rank %d: steps done\n", rank_);
    return 0;
}

static sem_t gate;
static void hold_stream(void *) {
    while (sem_wait(&gate) != 0) {
    }
}

static int freed() {
    sem_init(&gate, 0, 0);
    CK(aclInit(nullptr));
    CK(aclrtSetDevice(rank_));
    aclrtStream s;
    CK(aclrtCreateStream(&s));
    HcclComm comm;
    CK(init_comm(&comm));
    const size_t count = 1 << 18, bytes = count * 4;
    void *in = nullptr, *out = nullptr;
    CK(aclrtMalloc(&in, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CK(aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<float> h(count, 1.0f), back(count);
    CK(aclrtMemcpy(in, bytes, h.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CK(aclrtLaunchHostFunc(s, hold_stream, nullptr));
    CK(HcclAllReduce(in, out, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    void *again = nullptr;
    if (rank_ == 0) {
        CK(aclrtFree(out));
        if (getenv("REALLOC")) {
            CK(aclrtMalloc(&again, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
            std::vector<float> mark(count, 42.0f);
            CK(aclrtMemcpy(again, bytes, mark.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
            printf("rank 0: reallocated at %s address\n", again == out ? "the same" : "another");
        }
    }
    sem_post(&gate);
    int e = aclrtSynchronizeStream(s);
    printf("rank %d: sync -> %d %s\n", rank_, e, e ? msg() : "");
    if (again) {
        CK(aclrtMemcpy(back.data(), bytes, again, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
        printf("rank 0: new allocation %s\n", back[0] == 42.0f ? "untouched" : "OVERWRITTEN");
    }
    fflush(stdout);
    return 0;
}

static void wait_go(void *) {
    const char *go = getenv("GO_FILE");
    for (int i = 0; i < 6000 && access(go, F_OK) != 0; i++) usleep(10000);
}

static int held() {
    CK(aclInit(nullptr));
    CK(aclrtSetDevice(rank_));
    aclrtStream s;
    CK(aclrtCreateStream(&s));
    HcclComm comm;
    CK(init_comm(&comm));
    const size_t count = 1 << 18, bytes = count * 4;
    void *in = nullptr, *out = nullptr;
    CK(aclrtMalloc(&in, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CK(aclrtMalloc(&out, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<float> h(count, 1.0f);
    CK(aclrtMemcpy(in, bytes, h.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    if (rank_ == n_ - 1) CK(aclrtLaunchHostFunc(s, wait_go, nullptr));
    CK(HcclAllReduce(in, out, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    int e = aclrtSynchronizeStream(s);
    printf("rank %d: sync -> %d %s\n", rank_, e, e ? msg() : "");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    rank_ = atoi(getenv("RANK_ID") ? getenv("RANK_ID") : "0");
    n_ = atoi(getenv("RANK_SIZE") ? getenv("RANK_SIZE") : "1");
    std::string mode = argv[1];
    if (mode == "loop") return loop(argc > 2 ? atol(argv[2]) : 0, argc > 3 ? strtoul(argv[3], 0, 10) : 1 << 16);
    if (mode == "steps") return steps();
    if (mode == "freed") return freed();
    if (mode == "held") return held();
    return 2;
}
