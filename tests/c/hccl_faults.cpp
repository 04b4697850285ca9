// Fault scenarios for multi-process HCCL jobs. Usage: hccl_faults SCENARIO ROOTINFO_FILE with
// RANK_ID/RANK_SIZE set. Each rank prints "rank R: CALL -> CODE: MESSAGE" for the failure it
// sees and exits 3; a rank with nothing to report exits 0.
//   mismatch-count | mismatch-dtype | mismatch-op   rank 1 calls something else
//   no-join        rank 1 never calls init (waits for rank 0), the others time out in init
//   killed         the last rank kills itself right after enqueuing an AllReduce
//   send-no-recv   rank 0 sends to rank 1, which never receives (and stays alive until rank 0
//                  is done)
//   p2p-mismatch   rank 0 sends 1024 floats, rank 1 receives 512
//   destroy-early  rank 1 destroys its communicator (and stays alive); rank 0 calls AllReduce
//   destroy-before-sync  every rank enqueues big AllReduces and destroys before synchronizing
//                  (no failure expected)
//   entry-log      one AllReduce (run with HCCL_ENTRY_LOG_ENABLE=1)
//   bad-stream     every rank calls AllReduce on a destroyed stream (an error), then
//                  AllReduces on its good stream, which must run and be right (prints
//                  "bad stream refused with CODE")
#include <acl/acl.h>
#include <hccl/hccl.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

static int rank_, n_;
static std::string done_file;

// Rank 0 says it is done (failed or not) by creating ROOTINFO_FILE.done; a rank that must
// stay alive while rank 0 runs into the fault waits for it (at most 60 s).
static void say_done() {
    if (rank_ == 0 && !done_file.empty()) {
        FILE *f = fopen(done_file.c_str(), "w");
        if (f) fclose(f);
    }
}
static void wait_done() {
    for (int i = 0; i < 6000 && access(done_file.c_str(), F_OK) != 0; i++) usleep(10000);
}

static void report(const char *call, int code) {
    const char *m = aclGetRecentErrMsg();
    printf("rank %d: %s -> %d: %s\n", rank_, call, code, m ? m : "(no message)");
    fflush(stdout);
    say_done();
}
#define ACHECK(call)                                               \
    do {                                                           \
        int e_ = (call);                                           \
        if (e_ != 0) { report(#call, e_); exit(1); }               \
    } while (0)
// A call that may fail because of the fault: report and exit 3.
#define FAULT(call)                                                \
    do {                                                           \
        int e_ = (call);                                           \
        if (e_ != 0) { report(#call, e_); exit(3); }               \
    } while (0)

static HcclRootInfo root_info(const char *file) {
    HcclRootInfo ri;
    if (rank_ == 0) {
        ACHECK(HcclGetRootInfo(&ri));
        std::string tmp = std::string(file) + ".tmp";
        FILE *f = fopen(tmp.c_str(), "wb");
        fwrite(&ri, sizeof ri, 1, f);
        fclose(f);
        rename(tmp.c_str(), file);
    } else {
        FILE *f = nullptr;
        for (int i = 0; i < 3000 && !(f = fopen(file, "rb")); i++) usleep(10000);
        if (!f || fread(&ri, sizeof ri, 1, f) != 1) { fprintf(stderr, "cannot read %s\n", file); exit(1); }
        fclose(f);
    }
    return ri;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: hccl_faults SCENARIO ROOTINFO_FILE\n"); return 2; }
    std::string sc = argv[1];
    done_file = std::string(argv[2]) + ".done";
    rank_ = atoi(getenv("RANK_ID"));
    n_ = atoi(getenv("RANK_SIZE"));
    ACHECK(aclInit(nullptr));
    ACHECK(aclrtSetDevice(rank_ % 8));
    HcclRootInfo ri = root_info(argv[2]);
    if (sc == "no-join" && rank_ == 1) {
        wait_done();
        return 0;
    }
    HcclComm comm;
    FAULT(HcclCommInitRootInfo(n_, &ri, rank_, &comm));
    aclrtStream s;
    ACHECK(aclrtCreateStream(&s));
    size_t count = 1024;
    void *a, *b;
    ACHECK(aclrtMalloc(&a, count * 8, ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMalloc(&b, count * 8, ACL_MEM_MALLOC_HUGE_FIRST));
    // A few good operations first, so the history has something in it.
    for (int i = 0; i < 3; i++) FAULT(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    FAULT(aclrtSynchronizeStream(s));
    if (sc == "mismatch-count") {
        FAULT(HcclAllReduce(a, b, rank_ == 1 ? count / 2 : count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    } else if (sc == "mismatch-dtype") {
        FAULT(HcclAllReduce(a, b, count, rank_ == 1 ? HCCL_DATA_TYPE_INT32 : HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    } else if (sc == "mismatch-op") {
        if (rank_ == 1) FAULT(HcclBroadcast(a, count, HCCL_DATA_TYPE_FP32, 0, comm, s));
        else FAULT(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    } else if (sc == "killed") {
        for (int i = 0; i < 1000000; i++) {
            FAULT(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
            if (rank_ == n_ - 1 && i == 20) raise(SIGKILL);
            FAULT(aclrtSynchronizeStream(s));
        }
    } else if (sc == "p2p-mismatch") {
        if (rank_ == 0) FAULT(HcclSend(a, count, HCCL_DATA_TYPE_FP32, 1, comm, s));
        else FAULT(HcclRecv(b, count / 2, HCCL_DATA_TYPE_FP32, 0, comm, s));
        int e = aclrtSynchronizeStream(s);
        if (e != 0) {
            report("aclrtSynchronizeStream(s)", e);
            HcclResult ae = HCCL_SUCCESS;
            HcclGetCommAsyncError(comm, &ae);
            printf("rank %d: async error %d\n", rank_, (int)ae);
            exit(3);
        }
    } else if (sc == "destroy-early") {
        if (rank_ == 1) {
            ACHECK(HcclCommDestroy(comm));
            wait_done();
            return 0;
        }
        FAULT(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    } else if (sc == "destroy-before-sync") {
        void *x, *y;
        size_t big = 4 << 20;
        ACHECK(aclrtMalloc(&x, big, ACL_MEM_MALLOC_HUGE_FIRST));
        ACHECK(aclrtMalloc(&y, big, ACL_MEM_MALLOC_HUGE_FIRST));
        for (int i = 0; i < 5; i++) FAULT(HcclAllReduce(x, y, big / 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
        FAULT(HcclCommDestroy(comm));
        if (rank_ == 0) usleep(200000);
        FAULT(aclrtSynchronizeStream(s));
        printf("rank %d: no failure\n", rank_);
        aclFinalize();
        return 0;
    } else if (sc == "bad-stream") {
        aclrtStream gone;
        ACHECK(aclrtCreateStream(&gone));
        ACHECK(aclrtDestroyStream(gone));
        int e = HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, gone);
        if (e == 0) { printf("rank %d: AllReduce on a destroyed stream returned 0\n", rank_); exit(1); }
        printf("rank %d: bad stream refused with %d\n", rank_, e);
        // The refused call must not hold up the communicator's later collectives.
        float host[1024];
        for (int round = 0; round < 3; round++) {
            for (size_t i = 0; i < count; i++) host[i] = (float)(rank_ + 1 + round);
            ACHECK(aclrtMemcpy(a, count * 4, host, count * 4, ACL_MEMCPY_HOST_TO_DEVICE));
            FAULT(HcclAllReduce(a, b, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
            FAULT(aclrtSynchronizeStream(s));
            ACHECK(aclrtMemcpy(host, count * 4, b, count * 4, ACL_MEMCPY_DEVICE_TO_HOST));
            float want = (float)(n_ * (n_ + 1) / 2 + n_ * round);
            for (size_t i = 0; i < count; i++) {
                if (host[i] != want) {
                    printf("rank %d: round %d element %zu is %g, expected %g\n", rank_, round, i, host[i], want);
                    exit(1);
                }
            }
        }
    } else if (sc == "send-no-recv") {
        if (rank_ == 0) {
            FAULT(HcclSend(a, count, HCCL_DATA_TYPE_FP32, 1, comm, s));
            FAULT(aclrtSynchronizeStream(s));
        } else {
            wait_done();
            return 0;
        }
    }
    FAULT(aclrtSynchronizeStream(s));
    printf("rank %d: no failure\n", rank_);
    say_done();
    HcclCommDestroy(comm);
    aclFinalize();
    return 0;
}
