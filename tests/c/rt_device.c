/* Devices and contexts: set/get/reset, counts, device info, peer access, contexts per
 * thread, bad device ids and handles.
 * Usage: rt_device EXPECTED_COUNT [PHYS_OF_LOGICAL_LAST]
 * (run with ASCEND_RT_VISIBLE_DEVICES to check the renumbering). */
#include <pthread.h>
#include "common.h"

static aclrtContext g_ctx;
static int g_thread_dev = -100;
static aclError g_thread_err_nodev = 0;

static void *thread_main(void *arg) {
    (void)arg;
    int32_t dev = -1;
    /* A new thread has no current context until it sets one. */
    g_thread_err_nodev = aclrtGetDevice(&dev);
    if (aclrtSetCurrentContext(g_ctx) != ACL_SUCCESS) return NULL;
    if (aclrtGetDevice(&dev) != ACL_SUCCESS) return NULL;
    g_thread_dev = dev;
    return NULL;
}

int main(int argc, char **argv) {
    EXPECT(argc >= 2);
    uint32_t expect = (uint32_t)atoi(argv[1]);
    CHECK(aclInit(NULL));

    uint32_t count = 0;
    CHECK(aclrtGetDeviceCount(&count));
    printf("device count %u\n", count);
    EXPECT(count == expect);
    EXPECT_CODE(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM, "count");

    int32_t dev = -1;
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
    EXPECT_CODE(aclrtSetDevice((int32_t)count), ACL_ERROR_RT_INVALID_DEVICEID, "out of range");
    EXPECT_CODE(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, "-1");

    int32_t last = (int32_t)count - 1;
    int32_t active = -1;
    uint32_t pflags = 0;
    CHECK(aclrtGetPrimaryCtxState(last, NULL, &active));
    EXPECT(active == 0);
    EXPECT_CODE(aclrtGetPrimaryCtxState(last, &pflags, &active), ACL_ERROR_INVALID_PARAM, "flags");
    CHECK(aclrtSetDevice(last));
    CHECK(aclrtGetPrimaryCtxState(last, NULL, &active));
    EXPECT(active == 1);
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == last);
    if (argc >= 3) {
        int64_t phys = -1;
        CHECK(aclrtGetDeviceInfo((uint32_t)last, ACL_DEV_ATTR_PHY_CHIP_ID, &phys));
        printf("logical %d is physical %lld\n", last, (long long)phys);
        EXPECT(phys == atoi(argv[2]));
    }
    if (count == 1) {
        CHECK(aclrtResetDevice(last));
        CHECK(aclFinalize());
        printf("rt_device passed\n");
        return 0;
    }

    CHECK(aclrtSetDevice(0));
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 0);

    /* Device info (Ascend910B1) and capability. */
    int64_t v = 0;
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &v));
    EXPECT(v == 24);
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v));
    EXPECT(v == 48);
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_L2_CACHE_SIZE, &v));
    EXPECT(v == 201326592);
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_TOTAL_GLOBAL_MEM_SIZE, &v));
    EXPECT(v == 64LL << 30);
    EXPECT_CODE(aclrtGetDeviceInfo(0, (aclrtDevAttr)12345, &v), ACL_ERROR_RT_PARAM_INVALID, "12345");
    EXPECT_CODE(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, NULL), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT_CODE(aclrtGetDeviceInfo(count, ACL_DEV_ATTR_AICORE_CORE_NUM, &v), ACL_ERROR_RT_INVALID_DEVICEID, NULL);
    CHECK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &v));
    EXPECT(v == 24);
    CHECK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_VECTOR_CORE_NUM, &v));
    EXPECT(v == 48);
    CHECK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_L2_SIZE, &v));
    EXPECT(v == 201326592);
    EXPECT_CODE(aclGetDeviceCapability(0, (aclDeviceInfo)7, &v), ACL_ERROR_INVALID_PARAM, "deviceInfo");
    EXPECT_CODE(aclGetDeviceCapability(count, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_ERROR_INVALID_PARAM, "deviceId");

    aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_ABNORMAL;
    CHECK(aclrtQueryDeviceStatus(0, &st));
    EXPECT(st == ACL_RT_DEVICE_STATUS_NORMAL);
    aclrtUuid u0, u1;
    CHECK(aclrtDeviceGetUuid(0, &u0));
    CHECK(aclrtDeviceGetUuid(1, &u1));
    EXPECT(memcmp(&u0, &u1, sizeof u0) != 0);
    CHECK(aclrtSetTsDevice(ACL_TS_ID_AIVECTOR));
    EXPECT_CODE(aclrtSetTsDevice((aclrtTsId)5), ACL_ERROR_INVALID_PARAM, "tsId");
    aclrtUtilizationInfo ui;
    memset(&ui, 0x7f, sizeof ui);
    ui.utilizationExtend = NULL;
    CHECK(aclrtGetDeviceUtilizationRate(0, &ui));
    EXPECT(ui.cubeUtilization == 0 && ui.vectorUtilization == 0 && ui.memoryUtilization == -1);
    ui.utilizationExtend = (aclrtUtilizationExtendInfo *)&ui;
    EXPECT_CODE(aclrtGetDeviceUtilizationRate(0, &ui), ACL_ERROR_INVALID_PARAM, "utilizationExtend");
    int32_t least = -1, greatest = -1;
    CHECK(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT(least == 7 && greatest == 0);

    /* Peer access from the current device (0). */
    int32_t can = -1, pst = -1;
    CHECK(aclrtDeviceCanAccessPeer(&can, 0, 1));
    EXPECT(can == 1);
    EXPECT_CODE(aclrtDeviceCanAccessPeer(&can, 0, 0), ACL_ERROR_INVALID_PARAM, "different");
    EXPECT_CODE(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_FEATURE_UNSUPPORTED, "flags");
    CHECK(aclrtDevicePeerAccessStatus(0, 1, &pst));
    EXPECT(pst == 0);
    CHECK(aclrtDeviceEnablePeerAccess(1, 0));
    CHECK(aclrtDevicePeerAccessStatus(0, 1, &pst));
    EXPECT(pst == 1);
    CHECK(aclrtDeviceDisablePeerAccess(1));
    EXPECT_CODE(aclrtDeviceDisablePeerAccess(1), ACL_ERROR_INVALID_PARAM, "not enabled");

    /* System parameters, per context and per process. */
    int64_t pv = -1;
    EXPECT_CODE(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &pv), 107021 /* NOT_SET */, "not set");
    CHECK(aclrtCtxSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1));
    CHECK(aclrtCtxGetSysParamOpt(ACL_OPT_DETERMINISTIC, &pv));
    EXPECT(pv == 1);
    EXPECT_CODE(aclrtCtxSetSysParamOpt((aclSysParamOpt)9, 1), ACL_ERROR_INVALID_PARAM, "opt = 9");
    /* Process-wide parameters read as their documented default 0 until set. */
    pv = -1;
    CHECK(aclrtGetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, &pv));
    EXPECT(pv == 0);
    CHECK(aclrtSetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, 1));
    CHECK(aclrtGetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, &pv));
    EXPECT(pv == 1);
    CHECK(aclrtSetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, 0));
    CHECK(aclrtGetSysParamOpt(ACL_OPT_STRONG_CONSISTENCY, &pv));
    EXPECT(pv == 0);

    /* Contexts. */
    aclrtContext def = NULL, cur = NULL, ctx = NULL;
    CHECK(aclrtGetCurrentContext(&def));
    CHECK(aclrtCreateContext(&ctx, 1));
    CHECK(aclrtGetCurrentContext(&cur));
    EXPECT(cur == ctx); /* aclrtCreateContext makes the new context current */
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 1);
    aclrtStream ds = NULL;
    CHECK(aclrtCtxGetCurrentDefaultStream(&ds));
    EXPECT(ds != NULL);
    CHECK(aclrtSynchronizeStream(ds));
    EXPECT_CODE(aclrtDestroyStream(ds), ACL_ERROR_INVALID_PARAM, "default stream");

    g_ctx = ctx;
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, thread_main, NULL) == 0);
    pthread_join(t, NULL);
    EXPECT(g_thread_err_nodev == ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT(g_thread_dev == 1);

    CHECK(aclrtSetCurrentContext(def));
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 0);
    EXPECT_CODE(aclrtDestroyContext(def), ACL_ERROR_RT_CONTEXT_NULL, "aclrtResetDevice");
    CHECK(aclrtDestroyContext(ctx));
    EXPECT_CODE(aclrtSetCurrentContext(ctx), ACL_ERROR_RT_PARAM_INVALID, "destroyed");
    EXPECT_CODE(aclrtDestroyContext(ctx), ACL_ERROR_RT_CONTEXT_NULL, "destroyed");
    EXPECT_CODE(aclrtSetCurrentContext((aclrtContext)0x1234), ACL_ERROR_RT_PARAM_INVALID, "not a context handle");
    EXPECT_CODE(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM, "NULL");
    EXPECT_CODE(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM, "NULL");
    EXPECT_CODE(aclrtCreateContext(NULL, 0), ACL_ERROR_INVALID_PARAM, "context");
    EXPECT_CODE(aclrtCreateContext(&ctx, 99), ACL_ERROR_RT_INVALID_DEVICEID, "99");

    /* Reset: reference counted per device. Device 0 was set once, device `last` once. */
    CHECK(aclrtSetDevice(0)); /* second reference */
    CHECK(aclrtResetDevice(0));
    CHECK(aclrtGetDevice(&dev)); /* still alive */
    EXPECT(dev == 0);
    CHECK(aclrtSynchronizeDevice());
    CHECK(aclrtSynchronizeDeviceWithTimeout(100));
    EXPECT_CODE(aclrtSynchronizeDeviceWithTimeout(0), ACL_ERROR_RT_PARAM_INVALID, "timeout = 0");
    EXPECT_CODE(aclrtSynchronizeDeviceWithTimeout(-2), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    CHECK(aclrtResetDevice(0));
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
    EXPECT_CODE(aclrtResetDevice(0), 507007 /* ACL_ERROR_RT_CONTEXT_RELEASE_ERROR */, "not set");
    /* Device `last` holds one reference from the start; two more, then force. */
    CHECK(aclrtSetDevice(last));
    CHECK(aclrtSetDevice(last));
    CHECK(aclrtResetDeviceForce(last));
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    EXPECT_CODE(aclrtResetDevice(last), 507007, "not set");

    CHECK(aclFinalize());
    printf("rt_device passed\n");
    return 0;
}
