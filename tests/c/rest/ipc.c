#define _DEFAULT_SOURCE
/* Sharing between two processes, written from the API reference: IPC memory by key with the
 * pid allow-list, notifies, IPC events, count notifies, and shareable VMM handles. The
 * program forks before aclInit; parent (A, the exporter) and child (B, the importer) talk
 * through two pipes, as CANN's samples talk through files. */
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

static int to_child[2], to_parent[2];

static void put(int fd, const void *p, size_t n) {
    EXPECT(write(fd, p, n) == (ssize_t)n);
}
static void get(int fd, void *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        EXPECT(r > 0);
        got += (size_t)r;
    }
}

#define N 1024

static int parent(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));

    /* 1. IPC memory with the pid allow-list. */
    int32_t *dev = NULL;
    CHECK(aclrtMalloc((void **)&dev, N * sizeof(int32_t), ACL_MEM_MALLOC_HUGE_FIRST));
    int32_t host[N];
    for (int i = 0; i < N; i++) host[i] = i * 3;
    CHECK(aclrtMemcpy(dev, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE));
    char key[65];
    EXPECT_CODE(aclrtIpcMemGetExportKey(dev, sizeof(host), key, 4, 0), ACL_ERROR_INVALID_PARAM, "len");
    EXPECT_CODE(aclrtIpcMemGetExportKey(dev, sizeof(host) + 4096, key, sizeof(key), 0), ACL_ERROR_INVALID_PARAM,
                "past the end");
    CHECK(aclrtIpcMemGetExportKey(dev, sizeof(host), key, sizeof(key), 0));
    put(to_child[1], key, sizeof(key));
    int32_t pid = 0;
    get(to_parent[0], &pid, sizeof(pid)); /* B failed to import, and sends its pid */
    CHECK(aclrtIpcMemSetImportPid(key, &pid, 1));
    char ok = 1;
    put(to_child[1], &ok, 1);
    get(to_parent[0], &ok, 1); /* B imported, read, and wrote back */
    CHECK(aclrtMemcpy(host, sizeof(host), dev, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < N; i++) EXPECT(host[i] == -i);
    CHECK(aclrtIpcMemClose(key)); /* withdrawn: later imports fail */
    put(to_child[1], &ok, 1);
    /* Without pid validation anyone may import. */
    char key2[65];
    CHECK(aclrtIpcMemGetExportKey(dev, 64, key2, sizeof(key2), ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION));
    put(to_child[1], key2, sizeof(key2));
    get(to_parent[0], &ok, 1);
    CHECK(aclrtIpcMemClose(key2));

    /* 2. A notify: B records it, A's stream waits for it. */
    aclrtNotify nt;
    CHECK(aclrtCreateNotify(&nt, 0));
    uint32_t id = 0;
    CHECK(aclrtGetNotifyId(nt, &id));
    char nkey[65];
    CHECK(aclrtNotifyGetExportKey(nt, nkey, sizeof(nkey), 0));
    get(to_parent[0], &pid, sizeof(pid));
    CHECK(aclrtNotifySetImportPid(nt, &pid, 1));
    put(to_child[1], nkey, sizeof(nkey));
    put(to_child[1], &id, sizeof(id));
    CHECK(aclrtWaitAndResetNotify(nt, s, 30));
    CHECK(aclrtSynchronizeStream(s)); /* returns once B recorded */
    CHECK(aclrtDestroyNotify(nt));

    /* 3. An IPC event: A records, B waits; B records, A waits. */
    aclrtEvent ev;
    CHECK(aclrtCreateEventExWithFlag(&ev, ACL_EVENT_IPC));
    CHECK(aclrtRecordEvent(ev, s));
    CHECK(aclrtSynchronizeEvent(ev));
    aclrtIpcEventHandle eh;
    CHECK(aclrtIpcGetEventHandle(ev, &eh));
    put(to_child[1], &eh, sizeof(eh));
    get(to_parent[0], &ok, 1); /* B waited on it and recorded it */
    CHECK(aclrtSynchronizeEvent(ev));
    aclrtEventRecordedStatus st;
    CHECK(aclrtQueryEventStatus(ev, &st));
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    aclrtEvent plain;
    CHECK(aclrtCreateEvent(&plain));
    EXPECT_CODE(aclrtIpcGetEventHandle(plain, &eh), ACL_ERROR_INVALID_PARAM, "ACL_EVENT_IPC");
    CHECK(aclrtDestroyEvent(plain));

    /* 4. A shareable VMM handle. */
    size_t gran = 0;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof(prop));
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
    aclrtDrvMemHandle ph;
    CHECK(aclrtMallocPhysical(&ph, gran, &prop, 0));
    void *va = NULL;
    CHECK(aclrtReserveMemAddress(&va, gran, 0, NULL, 0));
    CHECK(aclrtMapMem(va, gran, 0, ph, 0));
    for (int i = 0; i < N; i++) host[i] = 7 * i + 1;
    CHECK(aclrtMemcpy(va, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE));
    aclrtDrvMemHandle back = NULL;
    CHECK(aclrtMemRetainAllocationHandle(va, &back));
    EXPECT(back == ph);
    uint64_t shareable = 0;
    CHECK(aclrtMemExportToShareableHandle(ph, ACL_MEM_HANDLE_TYPE_NONE, 0, &shareable));
    get(to_parent[0], &pid, sizeof(pid));
    CHECK(aclrtMemSetPidToShareableHandle(shareable, &pid, 1));
    put(to_child[1], &shareable, sizeof(shareable));
    get(to_parent[0], &ok, 1); /* B mapped it and read it */
    CHECK(aclrtUnmapMem(va));
    CHECK(aclrtReleaseMemAddress(va));
    CHECK(aclrtFreePhysical(ph));

    int status = 0;
    EXPECT(wait(&status) > 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(aclrtFree(dev));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_ipc parent passed\n");
    return 0;
}

static int child(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    int32_t pid = 0;
    CHECK(aclrtDeviceGetBareTgid(&pid));
    EXPECT(pid == (int32_t)getpid());

    char key[65];
    get(to_child[0], key, sizeof(key));
    int32_t *dev = NULL;
    EXPECT_CODE(aclrtIpcMemImportByKey((void **)&dev, key, 0), ACL_ERROR_RT_NO_PERMISSION, "may not import");
    put(to_parent[1], &pid, sizeof(pid));
    char ok;
    get(to_child[0], &ok, 1);
    CHECK(aclrtIpcMemImportByKey((void **)&dev, key, 0));
    int32_t host[N];
    CHECK(aclrtMemcpy(host, sizeof(host), dev, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < N; i++) EXPECT(host[i] == i * 3);
    for (int i = 0; i < N; i++) host[i] = -i;
    CHECK(aclrtMemcpyAsync(dev, sizeof(host), host, sizeof(host), ACL_MEMCPY_HOST_TO_DEVICE, s));
    CHECK(aclrtSynchronizeStream(s));
    /* Past the exported range is refused. */
    EXPECT_CODE(aclrtMemcpy(host, 8, dev + N, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtIpcMemClose(key));
    EXPECT_CODE(aclrtMemcpy(host, 8, dev, 8, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_INVALID_PARAM, NULL);
    put(to_parent[1], &ok, 1);
    get(to_child[0], &ok, 1);
    EXPECT_CODE(aclrtIpcMemImportByKey((void **)&dev, key, 0), ACL_ERROR_INVALID_PARAM, "not exported");
    char key2[65];
    get(to_child[0], key2, sizeof(key2));
    CHECK(aclrtIpcMemImportByKey((void **)&dev, key2, 0));
    CHECK(aclrtMemcpy(host, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(host[3] == -3);
    CHECK(aclrtIpcMemClose(key2));
    put(to_parent[1], &ok, 1);

    /* Notify. */
    put(to_parent[1], &pid, sizeof(pid));
    char nkey[65];
    uint32_t want = 0, id = 1;
    get(to_child[0], nkey, sizeof(nkey));
    get(to_child[0], &want, sizeof(want));
    aclrtNotify nt;
    CHECK(aclrtNotifyImportByKey(&nt, nkey, 0));
    CHECK(aclrtGetNotifyId(nt, &id));
    EXPECT(id == want);
    usleep(100000);
    CHECK(aclrtRecordNotify(nt, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtDestroyNotify(nt));

    /* IPC event. */
    aclrtIpcEventHandle eh;
    get(to_child[0], &eh, sizeof(eh));
    aclrtEvent ev;
    CHECK(aclrtIpcOpenEventHandle(eh, &ev));
    aclrtEventRecordedStatus st;
    CHECK(aclrtQueryEventStatus(ev, &st));
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK(aclrtStreamWaitEvent(s, ev));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtRecordEvent(ev, s));
    CHECK(aclrtSynchronizeEvent(ev));
    put(to_parent[1], &ok, 1);
    CHECK(aclrtDestroyEvent(ev));

    /* Shareable VMM handle. */
    put(to_parent[1], &pid, sizeof(pid));
    uint64_t shareable = 0;
    get(to_child[0], &shareable, sizeof(shareable));
    aclrtDrvMemHandle ph;
    CHECK(aclrtMemImportFromShareableHandle(shareable, 0, &ph));
    size_t gran = 2 << 20;
    void *va = NULL;
    CHECK(aclrtReserveMemAddress(&va, gran, 0, NULL, 0));
    CHECK(aclrtMapMem(va, gran, 0, ph, 0));
    CHECK(aclrtMemcpy(host, sizeof(host), va, sizeof(host), ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < N; i++) EXPECT(host[i] == 7 * i + 1);
    CHECK(aclrtUnmapMem(va));
    CHECK(aclrtReleaseMemAddress(va));
    CHECK(aclrtFreePhysical(ph));
    EXPECT_CODE(aclrtMemImportFromShareableHandle(0x1234, 0, &ph), ACL_ERROR_INVALID_PARAM, "not exported");
    put(to_parent[1], &ok, 1);

    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_ipc child passed\n");
    return 0;
}

int main(void) {
    EXPECT(pipe(to_child) == 0 && pipe(to_parent) == 0);
    fflush(stdout);
    pid_t p = fork();
    EXPECT(p >= 0);
    return p == 0 ? child() : parent();
}
