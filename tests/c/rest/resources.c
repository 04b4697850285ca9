/* Resources, ids and tools of the runtime (issue 12, group 6), written from CANN's API
 * reference (runtime/docs/api_docs and the hiascend runtime API pages):
 * - external allocators (aclrtAllocator*): the description, registration on a stream, and
 *   aclrtAllocatorGetByStream giving back what was registered;
 * - device ids (user / logical / physical), topology, capability, arch compatibility,
 *   memory types;
 * - device, stream and thread resource limits, stream and event availability;
 * - shared buffers (aclrtMbuf);
 * - process snapshots (lock, backup, restore, unlock);
 * - the dump configuration functions and msproftx marks;
 * - the hardware sync address, profiling trace points, device groups (not on Ascend910B). */
#define _GNU_SOURCE
#include <unistd.h>
#include "common.h"
#include "acl/acl_prof.h"
#include "acl/acl_dump.h"

static void *my_alloc(aclrtAllocator a, size_t size) { (void)a; (void)size; return NULL; }
static void my_free(aclrtAllocator a, aclrtAllocatorBlock b) { (void)a; (void)b; }
static void *my_advise(aclrtAllocator a, size_t s, aclrtAllocatorAddr addr) { (void)a; (void)s; (void)addr; return NULL; }
static void *my_addr(aclrtAllocatorBlock b) { return b; }

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL);
    fputs(text, f);
    fclose(f);
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));

    /* Allocators. */
    aclrtAllocatorDesc d = aclrtAllocatorCreateDesc();
    EXPECT(d != NULL);
    int obj = 7;
    CHECK(aclrtAllocatorSetObjToDesc(d, &obj));
    CHECK(aclrtAllocatorSetAllocFuncToDesc(d, my_alloc));
    CHECK(aclrtAllocatorSetFreeFuncToDesc(d, my_free));
    EXPECT_CODE(aclrtAllocatorRegister(s, d), ACL_ERROR_INVALID_PARAM, "aclrtAllocatorSetGetAddrFromBlockFuncToDesc");
    CHECK(aclrtAllocatorSetGetAddrFromBlockFuncToDesc(d, my_addr));
    CHECK(aclrtAllocatorSetAllocAdviseFuncToDesc(d, my_advise));
    EXPECT_CODE(aclrtAllocatorSetObjToDesc(d, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtAllocatorGetByStream(s, &d, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtAllocatorRegister(s, d));
    aclrtAllocatorDesc gd = NULL;
    aclrtAllocator ga = NULL;
    aclrtAllocatorAllocFunc gf = NULL;
    aclrtAllocatorFreeFunc gfr = NULL;
    aclrtAllocatorAllocAdviseFunc gad = NULL;
    aclrtAllocatorGetAddrFromBlockFunc gaddr = NULL;
    CHECK(aclrtAllocatorGetByStream(s, &gd, &ga, &gf, &gfr, &gad, &gaddr));
    EXPECT(gd == d && ga == &obj && gf == my_alloc && gfr == my_free && gad == my_advise && gaddr == my_addr);
    CHECK(aclrtAllocatorUnregister(s));
    EXPECT_CODE(aclrtAllocatorGetByStream(s, &gd, NULL, NULL, NULL, NULL, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtAllocatorDestroyDesc(d));

    /* Ids and topology. */
    uint32_t count = 0;
    CHECK(aclrtGetDeviceCount(&count));
    EXPECT(count >= 2);
    int32_t logic = -1, user = -1, phy = -1;
    CHECK(aclrtGetLogicDevIdByUserDevId(1, &logic));
    CHECK(aclrtGetPhyDevIdByLogicDevId(logic, &phy));
    CHECK(aclrtGetUserDevIdByLogicDevId(logic, &user));
    CHECK(aclrtGetLogicDevIdByPhyDevId(phy, &logic));
    EXPECT(user == 1 && logic == 1 && phy == 1);
    EXPECT_CODE(aclrtGetLogicDevIdByUserDevId((int32_t)count, &logic), ACL_ERROR_RT_INVALID_DEVICEID, NULL);
    uint64_t topo = 0;
    CHECK(aclrtGetDevicesTopo(0, 1, &topo));
    EXPECT(topo == ACL_RT_DEVS_TOPOLOGY_HCCS);
    CHECK(aclrtGetDevicesTopo(0, 0, &topo));
    EXPECT(topo == ACL_RT_DEVS_TOPOLOGY_HCCS);
    int32_t cap = -1;
    CHECK(aclrtGetDeviceCapability(0, ACL_FEATURE_SYSTEM_MEMQ_EVENT_CROSS_DEV, &cap));
    EXPECT(cap == ACL_DEV_FEATURE_NOT_SUPPORT);
    EXPECT_CODE(aclrtGetDeviceCapability(0, (aclrtDevFeatureType)7, &cap), ACL_ERROR_RT_PARAM_INVALID, NULL);
    int32_t compat = -1;
    CHECK(aclrtCheckArchCompatibility("Ascend910B3", &compat));
    EXPECT(compat == 1);
    CHECK(aclrtCheckArchCompatibility("Ascend310P3", &compat));
    EXPECT(compat == 0);
    EXPECT_CODE(aclrtCheckArchCompatibility("NoSuchSoc", &compat), ACL_ERROR_RT_PARAM_INVALID, "NoSuchSoc");

    /* Memory types. */
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    void *rsv = NULL;
    size_t gran = 0;
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CHECK(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &gran));
    CHECK(aclrtReserveMemAddress(&rsv, gran, 0, NULL, 0));
    uint32_t ok = 9;
    void *list[2] = {dev, rsv};
    CHECK(aclrtCheckMemType(list, 1, ACL_RT_MEM_TYPE_DEV, &ok, 0));
    EXPECT(ok == 1);
    CHECK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &ok, 0));
    EXPECT(ok == 0);
    CHECK(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV | ACL_RT_MEM_TYPE_RSVD, &ok, 0));
    EXPECT(ok == 1);
    EXPECT_CODE(aclrtCheckMemType(list, 2, 0x1, &ok, 0), ACL_ERROR_RT_PARAM_INVALID, "memType");
    EXPECT_CODE(aclrtCheckMemType(list, 2, ACL_RT_MEM_TYPE_DEV, &ok, 1), ACL_ERROR_RT_PARAM_INVALID, "reserve");
    CHECK(aclrtReleaseMemAddress(rsv));

    /* Resource limits. */
    uint32_t v = 0, cube = 0;
    CHECK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &cube));
    EXPECT(cube > 0);
    CHECK(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, cube / 2));
    CHECK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &v));
    EXPECT(v == cube / 2);
    EXPECT_CODE(aclrtSetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, cube + 1), ACL_ERROR_RT_PARAM_INVALID, "exceeds");
    EXPECT_CODE(aclrtGetDeviceResLimit(3, ACL_RT_DEV_RES_CUBE_CORE, &v), 507033, "aclrtSetDevice");
    CHECK(aclrtSetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, 4));
    CHECK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_VECTOR_CORE, &v));
    EXPECT(v == 4);
    CHECK(aclrtGetStreamResLimit(s, ACL_RT_DEV_RES_CUBE_CORE, &v));
    EXPECT(v == cube / 2); /* the device's limit */
    CHECK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
    uint32_t dev_vec = v;
    CHECK(aclrtUseStreamResInCurrentThread(s));
    CHECK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
    EXPECT(v == 4);
    CHECK(aclrtUnuseStreamResInCurrentThread(s));
    CHECK(aclrtGetResInCurrentThread(ACL_RT_DEV_RES_VECTOR_CORE, &v));
    EXPECT(v == dev_vec);
    CHECK(aclrtResetStreamResLimit(s));
    CHECK(aclrtResetDeviceResLimit(0));
    CHECK(aclrtGetDeviceResLimit(0, ACL_RT_DEV_RES_CUBE_CORE, &v));
    EXPECT(v == cube);
    uint32_t sa = 0, sb = 0, ea = 0, eb = 0;
    CHECK(aclrtGetStreamAvailableNum(&sa));
    CHECK(aclrtGetEventAvailNum(&ea));
    aclrtStream s2 = NULL;
    aclrtEvent ev = NULL;
    CHECK(aclrtCreateStream(&s2));
    CHECK(aclrtCreateEvent(&ev));
    CHECK(aclrtGetStreamAvailableNum(&sb));
    CHECK(aclrtGetEventAvailNum(&eb));
    EXPECT(sb == sa - 1 && eb == ea - 1);
    CHECK(aclrtDestroyEvent(ev));
    CHECK(aclrtDestroyStream(s2));

    /* Shared buffers. */
    aclrtMbuf b = NULL, b2 = NULL, got = NULL;
    CHECK(aclrtAllocBuf(&b, 1024));
    void *data = NULL;
    size_t size = 0, len = 99;
    CHECK(aclrtGetBufData(b, &data, &size));
    EXPECT(data != NULL && size == 1024);
    CHECK(aclrtGetBufDataLen(b, &len));
    EXPECT(len == 0);
    CHECK(aclrtMemcpy(data, size, "hello", 6, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtSetBufDataLen(b, 6));
    EXPECT_CODE(aclrtSetBufDataLen(b, 2048), ACL_ERROR_INVALID_PARAM, NULL);
    char ud[8] = "ctrl";
    CHECK(aclrtSetBufUserData(b, ud, 5, 90));
    EXPECT_CODE(aclrtSetBufUserData(b, ud, 8, 90), ACL_ERROR_INVALID_PARAM, "96");
    CHECK(aclrtCopyBufRef(b, &b2));
    void *data2 = NULL;
    CHECK(aclrtGetBufData(b2, &data2, &size));
    EXPECT(data2 == data);
    char back[8] = {0};
    CHECK(aclrtGetBufUserData(b2, back, 5, 90));
    EXPECT(strcmp(back, "ctrl") == 0);
    CHECK(aclrtGetBufDataLen(b2, &len));
    EXPECT(len == 6);
    aclrtMbuf b3 = NULL;
    CHECK(aclrtAllocBuf(&b3, 16));
    CHECK(aclrtAppendBufChain(b, b3));
    uint32_t num = 0;
    CHECK(aclrtGetBufChainNum(b, &num));
    EXPECT(num == 2);
    CHECK(aclrtGetBufFromChain(b, 1, &got));
    EXPECT(got == b3);
    EXPECT_CODE(aclrtGetBufFromChain(b, 2, &got), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtFreeBuf(b));
    char host[8] = {0};
    CHECK(aclrtMemcpy(host, 8, data2, 6, ACL_MEMCPY_DEVICE_TO_HOST)); /* still held by b2 */
    EXPECT(strcmp(host, "hello") == 0);
    CHECK(aclrtFreeBuf(b2));
    CHECK(aclrtFreeBuf(b3));
    EXPECT_CODE(aclrtFreeBuf(b3), ACL_ERROR_INVALID_PARAM, NULL);

    /* Snapshots: lock, back up, restore, unlock (in that order only). */
    EXPECT_CODE(aclrtSnapShotProcessBackup(), ACL_ERROR_SNAPSHOT_BACKUP_FAILED, "LOCKED");
    EXPECT_CODE(aclrtSnapShotProcessUnlock(), ACL_ERROR_SNAPSHOT_UNLOCK_FAILED, NULL);
    CHECK(aclrtMemset(dev, 4096, 0x11, 4096));
    CHECK(aclrtSnapShotProcessLock());
    EXPECT_CODE(aclrtSnapShotProcessLock(), ACL_ERROR_SNAPSHOT_LOCK_FAILED, NULL);
    EXPECT_CODE(aclrtSnapShotProcessRestore(), ACL_ERROR_SNAPSHOT_RESTORE_FAILED, "BACKED_UP");
    CHECK(aclrtSnapShotProcessBackup());
    CHECK(aclrtSnapShotProcessRestore());
    CHECK(aclrtSnapShotProcessUnlock());
    unsigned char first = 0;
    CHECK(aclrtMemcpy(&first, 1, dev, 1, ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(first == 0x11);

    /* Hardware sync address, trace points, groups. */
    void *sync = NULL;
    CHECK(aclrtGetHardwareSyncAddr(&sync));
    EXPECT(sync != NULL);
    unsigned char pt[18] = {1};
    CHECK(aclrtProfTrace(pt, 18, s));
    EXPECT_CODE(aclrtProfTrace(pt, 19, s), ACL_ERROR_RT_PARAM_INVALID, "length");
    CHECK(aclrtSynchronizeStream(s));
    uint32_t groups = 0;
    EXPECT_CODE(aclrtGetGroupCount(&groups), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL);

    /* Dump configuration. */
    EXPECT_CODE(aclmdlSetDump("dump.json"), ACL_ERROR_DUMP_NOT_RUN, "aclmdlInitDump");
    CHECK(aclmdlInitDump());
    EXPECT_CODE(aclmdlInitDump(), ACL_ERROR_REPEAT_INITIALIZE, NULL);
    write_file("dump_bad.json", "{\"dump\":{\"dump_mode\":\"sideways\"}}");
    EXPECT_CODE(aclmdlSetDump("dump_bad.json"), ACL_ERROR_INVALID_DUMP_CONFIG, "dump_mode");
    write_file("dump_ok.json", "{\"dump\":{\"dump_list\":[{}],\"dump_path\":\"/tmp/npu-emu-dump\",\"dump_mode\":\"all\",\"dump_op_switch\":\"on\"}}");
    CHECK(aclmdlSetDump("dump_ok.json"));
    const char *dp = acldumpGetPath(DATA_DUMP);
    EXPECT(dp != NULL && strcmp(dp, "/tmp/npu-emu-dump") == 0);
    EXPECT(acldumpGetPath(OVERFLOW_DUMP) == NULL);
    CHECK(aclmdlFinalizeDump());
    EXPECT_CODE(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN, NULL);
    remove("dump_bad.json");
    remove("dump_ok.json");
    /* Operator-information records (aclopStartDumpArgs): the directory is made; a second
     * start fails; a stop when stopped succeeds; other dump types do nothing. */
    char argdir[128];
    snprintf(argdir, sizeof argdir, "/tmp/npu-emu-args-%d/sub", (int)getpid());
    CHECK(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, argdir));
    EXPECT(access(argdir, F_OK) == 0);
    EXPECT_CODE(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, argdir), ACL_ERROR_FAILURE, "already started");
    CHECK(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS));
    CHECK(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS));
    EXPECT_CODE(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, ""), ACL_ERROR_FAILURE, "empty");
    CHECK(aclopStartDumpArgs(0x2, NULL));
    rmdir(argdir);
    snprintf(argdir, sizeof argdir, "/tmp/npu-emu-args-%d", (int)getpid());
    rmdir(argdir);

    /* msproftx marks inside a profiling session. */
    CHECK(aclprofInit("prof_out", strlen("prof_out")));
    uint32_t devs[1] = {0};
    aclprofConfig *pc = aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, NULL, ACL_PROF_MSPROFTX);
    EXPECT(pc != NULL);
    CHECK(aclprofStart(pc));
    void *stamp = aclprofCreateStamp();
    EXPECT(stamp != NULL);
    CHECK(aclprofSetStampTraceMessage(stamp, "step_mark", 9));
    CHECK(aclprofMark(stamp));
    CHECK(aclprofPush(stamp));
    CHECK(aclprofPop());
    EXPECT_CODE(aclprofPop(), ACL_ERROR_INVALID_PARAM, "aclprofPush");
    uint32_t rid = 0;
    CHECK(aclprofRangeStart(stamp, &rid));
    CHECK(aclprofRangeStop(rid));
    EXPECT_CODE(aclprofRangeStop(rid), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclprofMarkEx("funcA", 5, s));
    aclprofStepInfo *step = aclprofCreateStepInfo();
    CHECK(aclprofGetStepTimestamp(step, ACL_STEP_START, s));
    CHECK(aclprofGetStepTimestamp(step, ACL_STEP_END, s));
    aclprofDestroyStepInfo(step);
    EXPECT(aclprofStr2Id("a") == aclprofStr2Id("a") && aclprofStr2Id("a") != aclprofStr2Id("b"));
    CHECK(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "500MB", 5));
    EXPECT_CODE(aclprofSetConfig(ACL_PROF_ARGS_MAX, "1", 1), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtSynchronizeStream(s));
    aclprofDestroyStamp(stamp);
    CHECK(aclprofStop(pc));
    CHECK(aclprofDestroyConfig(pc));
    CHECK(aclprofFinalize());
    char path[256];
    snprintf(path, sizeof path, "prof_out/npu_emu_profile_%d.json", (int)getpid());
    FILE *pf = fopen(path, "r");
    EXPECT(pf != NULL);
    char buf[16384];
    size_t got_n = fread(buf, 1, sizeof buf - 1, pf);
    buf[got_n] = 0;
    fclose(pf);
    EXPECT(strstr(buf, "step_mark") != NULL && strstr(buf, "funcA") != NULL && strstr(buf, "500MB") != NULL);
    size_t desc = 0;
    CHECK(aclprofGetOpDescSize(&desc));
    EXPECT(desc > 0);
    aclprofSubscribeConfig *sc = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &desc);
    EXPECT(sc != NULL);
    EXPECT_CODE(aclprofModelSubscribe(1, sc), ACL_ERROR_INVALID_MODEL_ID, "modelId");
    CHECK(aclprofDestroySubscribeConfig(sc));

    CHECK(aclrtFree(dev));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_resources passed\n");
    return 0;
}
