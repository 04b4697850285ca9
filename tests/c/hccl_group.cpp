// HcclGroupStart/HcclGroupEnd and user-memory registration, following the HCCL API
// reference's examples.
//   hccl_group              under `npu-emu run -n N` (rank table from RANK_TABLE_FILE):
//                           grouped send/recv to every peer (both directions in one group),
//                           merged collectives, the misuse errors, register/exchange/deregister
//   hccl_group --one-thread N   one process, one thread: HcclCommInitRootInfo of N devices
//                           inside one group, then an all-reduce per device in one group
// Prints "hccl_group rank R/N passed" per rank (or "hccl_group one-thread N passed").
#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define ACHECK(call)                                                                           \
    do {                                                                                       \
        aclError e_ = (call);                                                                  \
        if (e_ != ACL_SUCCESS) {                                                               \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,      \
                    (int)e_, aclGetRecentErrMsg() ? aclGetRecentErrMsg() : "");                \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
#define HCHECK(call)                                                                           \
    do {                                                                                       \
        HcclResult e_ = (call);                                                                \
        if (e_ != HCCL_SUCCESS) {                                                              \
            const char *m_ = aclGetRecentErrMsg();                                             \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,      \
                    (int)e_, m_ ? m_ : "");                                                    \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
#define EXPECT(cond)                                                                           \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                    \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
// The call fails with `code` and its message contains `sub`.
#define EXPECT_FAIL(call, code, sub)                                                           \
    do {                                                                                       \
        HcclResult e_ = (call);                                                                \
        const char *m_ = aclGetRecentErrMsg();                                                 \
        if (e_ != (code) || !m_ || !strstr(m_, sub)) {                                         \
            fprintf(stderr, "FAIL %s:%d: %s returned %d (want %d), message %s (want \"%s\")\n", \
                    __FILE__, __LINE__, #call, (int)e_, (int)(code), m_ ? m_ : "(none)", sub);  \
            exit(1);                                                                           \
        }                                                                                      \
        printf("ok %s -> %d\n", #call, (int)e_);                                               \
    } while (0)

static void *dev_floats(const std::vector<float> &h) {
    void *d = nullptr;
    ACHECK(aclrtMalloc(&d, h.size() * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMemcpy(d, h.size() * sizeof(float), h.data(), h.size() * sizeof(float),
                       ACL_MEMCPY_HOST_TO_DEVICE));
    return d;
}

static std::vector<float> host_floats(void *d, size_t n) {
    std::vector<float> h(n);
    ACHECK(aclrtMemcpy(h.data(), n * sizeof(float), d, n * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST));
    return h;
}

static int one_thread(int n) {
    ACHECK(aclInit(nullptr));
    HcclRootInfo root;
    ACHECK(aclrtSetDevice(0));
    HCHECK(HcclGetRootInfo(&root));
    std::vector<HcclComm> comms(n);
    std::vector<aclrtStream> streams(n);
    // Example 1 of the reference: one thread creates the communicator of every device.
    HCHECK(HcclGroupStart());
    for (int i = 0; i < n; i++) {
        ACHECK(aclrtSetDevice(i));
        HCHECK(HcclCommInitRootInfo(n, &root, i, &comms[i]));
    }
    HCHECK(HcclGroupEnd());
    std::vector<void *> bufs(n);
    for (int i = 0; i < n; i++) {
        ACHECK(aclrtSetDevice(i));
        ACHECK(aclrtCreateStream(&streams[i]));
        uint32_t r = 99;
        HCHECK(HcclGetRankId(comms[i], &r));
        EXPECT(r == (uint32_t)i);
        bufs[i] = dev_floats(std::vector<float>(4, (float)(i + 1)));
    }
    // Collectives of every device from this thread: merged in one group.
    HCHECK(HcclGroupStart());
    for (int i = 0; i < n; i++) {
        ACHECK(aclrtSetDevice(i));
        HCHECK(HcclAllReduce(bufs[i], bufs[i], 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[i], streams[i]));
    }
    HCHECK(HcclGroupEnd());
    for (int i = 0; i < n; i++) {
        ACHECK(aclrtSetDevice(i));
        ACHECK(aclrtSynchronizeStream(streams[i]));
        for (float v : host_floats(bufs[i], 4)) EXPECT(v == (float)(n * (n + 1) / 2));
        HCHECK(HcclCommDestroy(comms[i]));
    }
    printf("hccl_group one-thread %d passed\n", n);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "--one-thread") == 0) return one_thread(atoi(argv[2]));
    const char *rt = getenv("RANK_TABLE_FILE");
    EXPECT(rt && getenv("RANK_ID") && getenv("RANK_SIZE"));
    uint32_t rank = (uint32_t)atoi(getenv("RANK_ID"));
    uint32_t n = (uint32_t)atoi(getenv("RANK_SIZE"));
    int dev = getenv("ASCEND_DEVICE_ID") ? atoi(getenv("ASCEND_DEVICE_ID")) : (int)rank;
    ACHECK(aclInit(nullptr));
    ACHECK(aclrtSetDevice(dev));
    aclrtStream s;
    ACHECK(aclrtCreateStream(&s));
    HcclComm comm;
    HCHECK(HcclCommInitClusterInfo(rt, rank, &comm));

    // Example 3: send to every peer, then receive from every peer, in one group. Outside a
    // group the sends would wait for receives that come after them on every rank.
    const size_t cnt = 5;
    std::vector<void *> sendb(n), recvb(n);
    for (uint32_t p = 0; p < n; p++) {
        sendb[p] = dev_floats(std::vector<float>(cnt, (float)(100 * rank + p)));
        recvb[p] = dev_floats(std::vector<float>(cnt, -1.0f));
    }
    HCHECK(HcclGroupStart());
    for (uint32_t p = 0; p < n; p++)
        if (p != rank) HCHECK(HcclSend(sendb[p], cnt, HCCL_DATA_TYPE_FP32, p, comm, s));
    for (uint32_t p = 0; p < n; p++)
        if (p != rank) HCHECK(HcclRecv(recvb[p], cnt, HCCL_DATA_TYPE_FP32, p, comm, s));
    HCHECK(HcclGroupEnd());
    ACHECK(aclrtSynchronizeStream(s));
    for (uint32_t p = 0; p < n; p++) {
        if (p == rank) continue;
        for (float v : host_floats(recvb[p], cnt)) EXPECT(v == (float)(100 * p + rank));
    }

    // Example 2: merged collectives (reduce-scatter then all-gather), nested groups.
    std::vector<float> in(n);
    for (uint32_t i = 0; i < n; i++) in[i] = (float)(rank + i);
    void *a = dev_floats(in);
    void *b = dev_floats(std::vector<float>(1, 0.0f));
    HCHECK(HcclGroupStart());
    HCHECK(HcclGroupStart());
    HCHECK(HcclReduceScatter(a, b, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    HCHECK(HcclGroupEnd());
    HCHECK(HcclAllGather(b, a, 1, HCCL_DATA_TYPE_FP32, comm, s));
    HCHECK(HcclGroupEnd());
    ACHECK(aclrtSynchronizeStream(s));
    std::vector<float> got = host_floats(a, n);
    for (uint32_t i = 0; i < n; i++) EXPECT(got[i] == (float)(n * (n - 1) / 2 + n * i));

    // Misuse: End without Start, mixing kinds, HcclBatchSendRecv inside a group.
    EXPECT_FAIL(HcclGroupEnd(), HCCL_E_PARA, "without a matching HcclGroupStart");
    HCHECK(HcclGroupStart());
    HCHECK(HcclSend(sendb[(rank + 1) % n], cnt, HCCL_DATA_TYPE_FP32, (rank + 1) % n, comm, s));
    EXPECT_FAIL(HcclAllReduce(a, a, n, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s), HCCL_E_PARA,
                "may not mix");
    HcclSendRecvItem item = {HCCL_SEND, sendb[0], cnt, HCCL_DATA_TYPE_FP32, (rank + 1) % n};
    EXPECT_FAIL(HcclBatchSendRecv(&item, 1, comm, s), HCCL_E_NOT_SUPPORT, "inside HcclGroupStart");
    HCHECK(HcclRecv(recvb[(rank + n - 1) % n], cnt, HCCL_DATA_TYPE_FP32, (rank + n - 1) % n, comm, s));
    HCHECK(HcclGroupEnd());
    ACHECK(aclrtSynchronizeStream(s));
    for (float v : host_floats(recvb[(rank + n - 1) % n], cnt))
        EXPECT(v == (float)(100 * ((rank + n - 1) % n) + rank));

    // Memory registration: a window in device memory, exchanged with every peer.
    void *win = dev_floats(std::vector<float>(256, 0.0f));
    void *h = nullptr, *h2 = nullptr;
    HCHECK(HcclCommRegister(comm, win, 1024, &h, 0));
    EXPECT(h != nullptr);
    EXPECT_FAIL(HcclCommRegister(comm, (char *)win + 512, 256, &h2, 0), HCCL_E_PARA, "overlaps");
    std::vector<float> host(4);
    EXPECT_FAIL(HcclCommRegister(comm, host.data(), 16, &h2, 0), HCCL_E_PARA, "addr");
    EXPECT_FAIL(HcclCommRegister(comm, win, 0, &h2, 0), HCCL_E_PARA, "size=0");
    std::vector<uint32_t> peers;
    for (uint32_t p = 0; p < n; p++)
        if (p != rank) peers.push_back(p);
    HCHECK(HcclCommExchangeMem(comm, h, peers.data(), (uint32_t)peers.size()));
    uint32_t bad = n;
    EXPECT_FAIL(HcclCommExchangeMem(comm, h, &bad, 1), HCCL_E_PARA, "out of range");
    EXPECT_FAIL(HcclCommExchangeMem(comm, (void *)0x1234, peers.data(), 1), HCCL_E_PARA, "not a live");
    HCHECK(HcclCommDeregister(comm, h));
    EXPECT_FAIL(HcclCommDeregister(comm, h), HCCL_E_PARA, "already deregistered");

    // The last ACL error is the latest failure's: an HCCL failure after a tolerated ACL
    // failure does not leave the ACL code to be reported for it (aclrtPeekAtLastError).
    void *none = nullptr;
    EXPECT(aclrtMalloc(&none, 0, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_INVALID_PARAM);
    EXPECT_FAIL(HcclGetRankSize(comm, nullptr), HCCL_E_PTR, "rankSize");
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_SUCCESS);

    HCHECK(HcclCommDestroy(comm));
    printf("hccl_group rank %u/%u passed\n", rank, n);
    return 0;
}
