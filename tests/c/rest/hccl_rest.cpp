// The rest of HCCL (issue 12, group 7), written from the HCCL API reference: zero-copy memory
// ranges over the virtual-memory API (HcclCommSetMemoryRange, HcclCommActivateCommMemory and
// their undo), HcclCommSuspend/HcclCommResume, HcclCommWorkingDevNicSet, and CANN's data
// type x reduce op support (HCCL_E_NOT_SUPPORT). Two ranks, one thread each, over
// HcclCommInitAll. Symmetric memory windows (HcclCommSymWinRegister/Get/Deregister) as
// hcomm's hccl.h describes them.
#include <thread>
#include <vector>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include "acl/acl.h"
#include "hccl/hccl.h"

#define ACHECK(x) do { aclError e_ = (x); if (e_ != ACL_SUCCESS) { fprintf(stderr, "FAIL %s:%d %s -> %d: %s\n", __FILE__, __LINE__, #x, (int)e_, aclGetRecentErrMsg()); exit(1); } } while (0)
#define HCHECK(x) do { HcclResult e_ = (x); if (e_ != HCCL_SUCCESS) { fprintf(stderr, "FAIL %s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)e_); exit(1); } } while (0)
#define EXPECT(x, code) do { HcclResult e_ = (x); if (e_ != (code)) { fprintf(stderr, "FAIL %s:%d %s -> %d, expected %d\n", __FILE__, __LINE__, #x, (int)e_, (int)(code)); exit(1); } else printf("ok %s -> %d\n", #x, (int)e_); } while (0)
#define REQUIRE(c) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d %s\n", __FILE__, __LINE__, #c); exit(1); } } while (0)

static const int N = 2;
static const size_t COUNT = 1024;

static void rank_main(int r, HcclComm comm) {
    ACHECK(aclrtSetDevice(r));
    aclrtStream s;
    ACHECK(aclrtCreateStream(&s));

    // Zero copy: reserve, map physical memory, tell HCCL, activate.
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.id = r;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    size_t gran = 0;
    ACHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &gran));
    size_t size = gran;
    void *va = nullptr;
    ACHECK(aclrtReserveMemAddress(&va, 2 * size, 0, nullptr, 0));
    aclrtDrvMemHandle h;
    ACHECK(aclrtMallocPhysical(&h, size, &prop, 0));
    ACHECK(aclrtMapMem(va, size, 0, h, 0));
    EXPECT(HcclCommSetMemoryRange(comm, va, 2 * size, 1, 0), HCCL_E_PARA);
    HCHECK(HcclCommSetMemoryRange(comm, va, 2 * size, 0, 0));
    EXPECT(HcclCommSetMemoryRange(comm, (char *)va + size, size, 0, 0), HCCL_E_PARA); // overlaps
    // The second half is not mapped: not activatable.
    EXPECT(HcclCommActivateCommMemory(comm, (char *)va + size, size, 0, h, 0), HCCL_E_PARA);
    HCHECK(HcclCommActivateCommMemory(comm, va, size, 0, h, 0));
    EXPECT(HcclCommActivateCommMemory(comm, va, size, 0, h, 0), HCCL_E_PARA); // again
    EXPECT(HcclCommUnsetMemoryRange(comm, va), HCCL_E_PARA); // still active

    std::vector<float> in(COUNT), out(COUNT);
    for (size_t i = 0; i < COUNT; i++) in[i] = (float)(r + 1) * (float)i;
    ACHECK(aclrtMemcpy(va, COUNT * 4, in.data(), COUNT * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    HCHECK(HcclAllReduce(va, va, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    ACHECK(aclrtSynchronizeStream(s));
    ACHECK(aclrtMemcpy(out.data(), COUNT * 4, va, COUNT * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < COUNT; i++) REQUIRE(out[i] == 3.0f * (float)i);

    HCHECK(HcclCommDeactivateCommMemory(comm, va));
    EXPECT(HcclCommDeactivateCommMemory(comm, va), HCCL_E_PARA);
    HCHECK(HcclCommUnsetMemoryRange(comm, va));
    ACHECK(aclrtUnmapMem(va));
    ACHECK(aclrtFreePhysical(h));
    ACHECK(aclrtReleaseMemAddress(va));

    // CANN's type checks.
    void *buf = nullptr;
    ACHECK(aclrtMalloc(&buf, COUNT * 16, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT(HcclAllReduce(buf, buf, COUNT, HCCL_DATA_TYPE_UINT16, HCCL_REDUCE_SUM, comm, s), HCCL_E_NOT_SUPPORT);
    EXPECT(HcclAllReduce(buf, buf, COUNT, HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_PROD, comm, s), HCCL_E_NOT_SUPPORT);
    EXPECT(HcclReduceScatter(buf, buf, 8, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_PROD, comm, s), HCCL_E_NOT_SUPPORT);
    EXPECT(HcclAllGather(buf, (char *)buf + 64, 2, HCCL_DATA_TYPE_INT128, comm, s), HCCL_E_NOT_SUPPORT);

    // Symmetric windows (hcomm hccl.h): register, find by address, deregister.
    HcclCommSymWindow win = nullptr, found = nullptr;
    size_t off = 99;
    HCHECK(HcclCommSymWinRegister(comm, buf, 4096, &win, 1));
    REQUIRE(win != nullptr);
    HCHECK(HcclCommSymWinGet(comm, (char *)buf + 256, 64, &found, &off));
    REQUIRE(found == win && off == 256);
    EXPECT(HcclCommSymWinGet(comm, (char *)buf + 4090, 64, &found, &off), HCCL_E_NOT_FOUND);
    HcclCommSymWindow win2 = nullptr;
    EXPECT(HcclCommSymWinRegister(comm, (char *)buf + 1024, 64, &win2, 1), HCCL_E_PARA); /* overlaps */
    EXPECT(HcclCommSymWinRegister(comm, (char *)buf + 8192, 64, &win2, 0), HCCL_E_NOT_SUPPORT);
    EXPECT(HcclCommSymWinRegister(comm, buf, 0, &win2, 1), HCCL_E_PARA);
    EXPECT(HcclCommSymWinRegister(comm, nullptr, 64, &win2, 1), HCCL_E_PTR);
    EXPECT(HcclCommSymWinRegister(comm, buf, 64, nullptr, 1), HCCL_E_PTR);
    HCHECK(HcclCommSymWinDeregister(win));
    EXPECT(HcclCommSymWinDeregister(win), HCCL_E_PARA);
    EXPECT(HcclCommSymWinDeregister(nullptr), HCCL_E_PTR);
    EXPECT(HcclCommSymWinGet(comm, buf, 64, &found, &off), HCCL_E_NOT_FOUND);

    // NIC selection after an operation: accepted, nothing to switch on this node.
    uint32_t ranks[1] = {(uint32_t)(1 - r)};
    bool backup[1] = {true};
    HCHECK(HcclCommWorkingDevNicSet(comm, ranks, backup, 1));
    uint32_t bad[1] = {7};
    EXPECT(HcclCommWorkingDevNicSet(comm, bad, backup, 1), HCCL_E_PARA);
    EXPECT(HcclCommWorkingDevNicSet(comm, nullptr, backup, 1), HCCL_E_PTR);

    // Suspend: operations refused until resume.
    HCHECK(HcclCommSuspend(comm));
    EXPECT(HcclAllReduce(buf, buf, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s), HCCL_E_SUSPENDING);
    HCHECK(HcclCommResume(comm));
    ACHECK(aclrtMemcpy(buf, COUNT * 4, in.data(), COUNT * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    HCHECK(HcclAllReduce(buf, buf, COUNT, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    ACHECK(aclrtSynchronizeStream(s));
    ACHECK(aclrtMemcpy(out.data(), COUNT * 4, buf, COUNT * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < COUNT; i++) REQUIRE(out[i] == 3.0f * (float)i);
    ACHECK(aclrtFree(buf));
    ACHECK(aclrtDestroyStream(s));
}

int main() {
    ACHECK(aclInit(nullptr));
    int32_t devs[N] = {0, 1};
    HcclComm comms[N];
    HCHECK(HcclCommInitAll(N, devs, comms));
    // Before any operation there is no link whose NIC could be chosen.
    uint32_t ranks[1] = {1};
    bool backup[1] = {true};
    EXPECT(HcclCommWorkingDevNicSet(comms[0], ranks, backup, 1), HCCL_E_PARA);
    std::vector<std::thread> t;
    for (int r = 0; r < N; r++) t.emplace_back(rank_main, r, comms[r]);
    for (auto &x : t) x.join();
    for (int r = 0; r < N; r++) HCHECK(HcclCommDestroy(comms[r]));
    for (int r = 0; r < N; r++) ACHECK(aclrtResetDevice(r));
    ACHECK(aclFinalize());
    printf("rest_hccl passed\n");
    return 0;
}
