/* Conformance probes: each case checks one behaviour CANN documents (hiascend.com API
 * reference) or implements (hicann/runtime 8.5 sources), with the exact code. Run as
 * `conf_cases CASE`; prints "case CASE passed" and exits 0, or names the first mismatch.
 * /work/notes/conformance.md (outside the repo) lists the sources per case. */
#define _GNU_SOURCE
#include "common.h"
#include "acl/acl_prof.h"
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL);
    fputs(text, f);
    fclose(f);
}

static void setup(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
}

static void teardown(void) {
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
}

/* A host function that holds its stream until `release` is set. */
static volatile int release_flag = 0;
static volatile int started_flag = 0;
static void hold_stream(void *arg) {
    (void)arg;
    started_flag = 1;
    while (!release_flag) {
        usleep(1000);
    }
}

/* ---- behaviours that already conform (regression guards) ---- */

/* Devices and contexts: codes without a current device, out-of-range ids, the default
 * context made current by aclrtSetDevice and dropped by aclrtResetDevice. */
static void case_devices(void) {
    uint32_t n = 0;
    int32_t dev = -5;
    CHECK(aclrtGetDeviceCount(&n)); /* works before aclInit */
    /* Before aclInit no device can be set: CANN's runtime says "context null", which
     * torch_npu's GetDevice reads as device 0 (its first call comes before aclInit). */
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
    CHECK(aclInit(NULL));
    aclrtContext ctx = NULL, ctx2 = NULL;
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    EXPECT_CODE(aclrtGetCurrentContext(&ctx), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    EXPECT_CODE(aclrtGetDevice(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtGetDeviceCount(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID, NULL);
    EXPECT_CODE(aclrtSetDevice((int32_t)n), ACL_ERROR_RT_INVALID_DEVICEID, NULL);
    CHECK(aclrtSetDevice(1));
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 1);
    CHECK(aclrtGetCurrentContext(&ctx));
    EXPECT(ctx != NULL);
    /* A second aclrtSetDevice of the same device gives the same default context. */
    CHECK(aclrtSetDevice(1));
    CHECK(aclrtGetCurrentContext(&ctx2));
    EXPECT(ctx2 == ctx);
    /* A created context becomes current; destroying it leaves none current. */
    aclrtContext mine = NULL;
    CHECK(aclrtCreateContext(&mine, 2));
    CHECK(aclrtGetCurrentContext(&ctx2));
    EXPECT(ctx2 == mine);
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 2);
    CHECK(aclrtSetCurrentContext(ctx));
    CHECK(aclrtDestroyContext(mine));
    EXPECT_CODE(aclrtDestroyContext(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtSetCurrentContext(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtResetDevice(1));
    CHECK(aclrtResetDevice(1));
    EXPECT_CODE(aclrtGetCurrentContext(&ctx2), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    CHECK(aclFinalize());
}

/* Streams: synchronize with a timeout on a busy stream, query, bad timeouts. */
static void case_stream_timeout(void) {
    setup();
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    EXPECT_CODE(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    release_flag = 0;
    started_flag = 0;
    CHECK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    CHECK(aclrtStreamQuery(s, &st));
    EXPECT(st == ACL_STREAM_STATUS_NOT_READY);
    EXPECT_CODE(aclrtSynchronizeStreamWithTimeout(s, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, NULL);
    EXPECT_CODE(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtStreamQuery(s, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    release_flag = 1;
    CHECK(aclrtSynchronizeStreamWithTimeout(s, -1));
    CHECK(aclrtStreamQuery(s, &st));
    EXPECT(st == ACL_STREAM_STATUS_COMPLETE);
    CHECK(aclrtDestroyStream(s));
    EXPECT_CODE(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    teardown();
}

/* Events: an event never recorded, bad timeouts, elapsed time between recorded events. */
static void case_events(void) {
    setup();
    aclrtStream s = NULL;
    aclrtEvent a = NULL, b = NULL;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateEvent(&a));
    CHECK(aclrtCreateEvent(&b));
    aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    CHECK(aclrtQueryEventStatus(a, &rs));
    EXPECT(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_CODE(aclrtSynchronizeEventWithTimeout(a, -2), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtRecordEvent(NULL, s), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtQueryEventStatus(NULL, &rs), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtQueryEventStatus(a, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtSynchronizeEvent(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    float ms = -1.0f;
    EXPECT_CODE(aclrtEventElapsedTime(NULL, a, b), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtEventElapsedTime(&ms, NULL, b), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT(aclrtEventElapsedTime(&ms, a, b) != ACL_SUCCESS); /* never recorded */
    CHECK(aclrtRecordEvent(a, s));
    CHECK(aclrtRecordEvent(b, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtQueryEventStatus(b, &rs));
    EXPECT(rs == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK(aclrtEventElapsedTime(&ms, a, b));
    EXPECT(ms >= 0.0f);
    CHECK(aclrtDestroyEvent(a));
    CHECK(aclrtDestroyEvent(b));
    EXPECT_CODE(aclrtDestroyEvent(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* Callbacks: the codes for unsubscribed streams and threads, timeouts, bad block types. */
static int cb_count = 0;
static void count_cb(void *arg) {
    (void)arg;
    cb_count++;
}
static void case_callbacks(void) {
    setup();
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    EXPECT_CODE(aclrtLaunchCallback(count_cb, NULL, ACL_CALLBACK_BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG, NULL);
    EXPECT_CODE(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, NULL);
    uint64_t me = (uint64_t)pthread_self();
    CHECK(aclrtSubscribeReport(me, s));
    EXPECT_CODE(aclrtLaunchCallback(count_cb, NULL, (aclrtCallbackBlockType)2, s), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtProcessReport(10), ACL_ERROR_RT_REPORT_TIMEOUT, NULL);
    CHECK(aclrtLaunchCallback(count_cb, NULL, ACL_CALLBACK_NO_BLOCK, s));
    CHECK(aclrtProcessReport(20000)); /* returns as soon as the callback arrives */
    EXPECT(cb_count == 1);
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtUnSubscribeReport(me, s));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* Helpers: aclDataTypeSize, fp16 quirks, data buffers (abi.md §1.3). */
static void case_helpers(void) {
    EXPECT(aclDataTypeSize(ACL_FLOAT) == 4);
    EXPECT(aclDataTypeSize(ACL_FLOAT16) == 2);
    EXPECT(aclDataTypeSize(ACL_INT8) == 1);
    EXPECT(aclDataTypeSize(ACL_INT64) == 8);
    EXPECT(aclDataTypeSize(ACL_DOUBLE) == 8);
    EXPECT(aclDataTypeSize(ACL_BOOL) == 1);
    EXPECT(aclDataTypeSize(ACL_BF16) == 2);
    EXPECT(aclDataTypeSize(ACL_STRING) == 0);
    EXPECT(aclDataTypeSize(ACL_DT_UNDEFINED) == 0);
    EXPECT(aclDataTypeSize(ACL_COMPLEX128) == 16);
    EXPECT(aclDataTypeSize((aclDataType)12345) == 8);
    EXPECT(aclFloatToFloat16(1.0f) == 0x3C00);
    EXPECT(aclFloatToFloat16(1e9f) == 0x7BFF);
    EXPECT(aclFloatToFloat16(-1e9f) == 0xFBFF);
    EXPECT(aclFloat16ToFloat(0x7C00) == 65536.0f);
    EXPECT(aclFloat16ToFloat(0x3C00) == 1.0f);
    aclDataBuffer *db = aclCreateDataBuffer(NULL, 0);
    EXPECT(db != NULL);
    EXPECT(aclGetDataBufferAddr(db) == NULL);
    EXPECT(aclGetDataBufferSizeV2(db) == 0);
    CHECK(aclDestroyDataBuffer(db));
    EXPECT_CODE(aclDestroyDataBuffer(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT(aclGetDataBufferAddr(NULL) == NULL);
    EXPECT(aclGetDataBufferSizeV2(NULL) == 0);
}

/* aclrtMemcpy2d: dpitch/spitch below width, kinds the 2-D copy supports. */
static void case_memcpy2d_checks(void) {
    setup();
    void *d = NULL;
    char host[4096];
    CHECK(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_CODE(aclrtMemcpy2d(d, 8, host, 64, 16, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy2d(d, 64, host, 8, 16, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy2d(NULL, 64, host, 64, 16, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy2d(d, 64, NULL, 64, 16, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    /* The synchronous 2-D copy supports H2D, D2H and DEFAULT only. */
    EXPECT_CODE(aclrtMemcpy2d(d, 64, (char *)d + 2048, 64, 16, 2, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy2d(host, 64, host + 2048, 64, 16, 2, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM, NULL);
    /* Zero width or height is refused (S1 CheckMemcpy2dParam: ACL_REQUIRES_POSITIVE). */
    EXPECT_CODE(aclrtMemcpy2d(d, 64, host, 64, 0, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy2d(d, 64, host, 64, 16, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtFree(d));
    teardown();
}

/* aclrtMemcpy: every kind round trip, count 0, NULL. */
static void case_memcpy_kinds(void) {
    setup();
    void *d1 = NULL, *d2 = NULL, *ph = NULL;
    char src[256], dst[256];
    for (int i = 0; i < 256; i++) src[i] = (char)(i * 7 + 1);
    CHECK(aclrtMalloc(&d1, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&d2, 256, ACL_MEM_MALLOC_NORMAL_ONLY));
    CHECK(aclrtMallocHost(&ph, 256));
    CHECK(aclrtMemcpy(d1, 256, src, 256, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(d2, 256, d1, 256, ACL_MEMCPY_DEVICE_TO_DEVICE));
    CHECK(aclrtMemcpy(ph, 256, d2, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(aclrtMemcpy(dst, 256, ph, 256, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT(memcmp(src, dst, 256) == 0);
    memset(dst, 0, sizeof dst);
    CHECK(aclrtMemcpy(d2, 256, src, 256, ACL_MEMCPY_DEFAULT));
    CHECK(aclrtMemcpy(dst, 256, d2, 256, ACL_MEMCPY_DEFAULT));
    EXPECT(memcmp(src, dst, 256) == 0);
    EXPECT_CODE(aclrtMemcpy(NULL, 256, src, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy(d1, 256, NULL, 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy(d1, 256, src, 16, (aclrtMemcpyKind)42), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtMemcpy(d1, 256, src, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtFreeHost(ph));
    CHECK(aclrtFree(d1));
    CHECK(aclrtFree(d2));
    EXPECT_CODE(aclrtMalloc(&d1, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMalloc(NULL, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtFree(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    size_t fr = 0, tot = 0;
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
    EXPECT(tot > 0 && fr <= tot);
    teardown();
}

/* ---- discrepancies found (see conformance.md) ---- */

/* aclGetRecentErrMsg: messages of several failures accumulate, newest first, and reading
 * clears them (D: "获取并清空 ... 最上面的错误描述信息为最新的"). */
static void case_errmsg_accumulates(void) {
    CHECK(aclInit(NULL));
    EXPECT(aclrtSetDevice(99) == ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtSetDevice(77) == ACL_ERROR_RT_INVALID_DEVICEID);
    const char *m = aclGetRecentErrMsg();
    EXPECT(m != NULL);
    printf("message: %s\n", m);
    const char *p99 = strstr(m, "99");
    const char *p77 = strstr(m, "77");
    EXPECT(p99 != NULL && p77 != NULL);
    EXPECT(p77 < p99); /* newest on top */
    EXPECT(aclGetRecentErrMsg() == NULL); /* cleared by the read */
    CHECK(aclFinalize());
}

/* aclInit with an empty (0-byte) config file: no configuration, success (S1
 * JsonParser::ParseJsonFromFile returns ACL_SUCCESS for an empty file). */
static void case_init_empty_config(void) {
    write_file("empty.json", "");
    CHECK(aclInit("empty.json"));
    CHECK(aclFinalize());
    /* Same content as "no config": a later aclInit(NULL) is not a different config. */
    CHECK(aclInit(NULL));
    CHECK(aclFinalize());
}

/* aclGetDeviceCapability with deviceId >= device count: ACL_ERROR_INVALID_PARAM (S1
 * aclGetDeviceCapabilityImpl). */
static void case_capability_bad_device(void) {
    int64_t v = 0;
    uint32_t n = 0;
    CHECK(aclrtGetDeviceCount(&n));
    EXPECT_CODE(aclGetDeviceCapability(n, ACL_DEVICE_INFO_AI_CORE_NUM, &v), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclGetDeviceCapability(0, ACL_DEVICE_INFO_AI_CORE_NUM, &v));
    EXPECT(v > 0);
}

/* The ACL layer checks the pointers (and the copy kind) first, then count == 0 returns
 * success before the runtime's checks (S1 aclrtMemcpyImpl, aclrtMemsetImpl,
 * aclrtMemcpyAsyncImpl, aclrtMemsetAsyncImpl: ACL_REQUIRES_NOT_NULL, then rtMemcpy). */
static void case_zero_count_null(void) {
    setup();
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    void *d = NULL;
    char h[16];
    CHECK(aclrtMalloc(&d, 16, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_CODE(aclrtMemcpy(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy(d, 16, h, 0, (aclrtMemcpyKind)42), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemset(NULL, 0, 0, 0), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpyAsync(NULL, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemsetAsync(NULL, 0, 0, 0, s), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtMemcpy(d, 0, h, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemset(d, 0, 0, 0));
    CHECK(aclrtMemcpyAsync(d, 0, h, 0, ACL_MEMCPY_HOST_TO_DEVICE, s));
    CHECK(aclrtMemsetAsync(d, 0, 0, 0, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtFree(d));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* count > destMax: the lower runtime's RT_ERROR_INVALID_VALUE, ACL_ERROR_RT_PARAM_INVALID
 * (S1 ApiErrorDecorator::MemCopySync / MemcpyAsync / MemsetAsync). */
static void case_count_gt_destmax(void) {
    setup();
    aclrtStream s = NULL;
    void *d = NULL;
    char host[64] = {0};
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_CODE(aclrtMemcpy(d, 10, host, 20, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtMemcpyAsync(d, 10, host, 20, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtMemsetAsync(d, 10, 0, 20, s), ACL_ERROR_RT_PARAM_INVALID, NULL);
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtFree(d));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* aclrtMemcpy2d limits: width <= 5000000, height <= 5242880, else the lower runtime's
 * ACL_ERROR_RT_PARAM_INVALID (D aclrtMemcpy2dAsync "width最大设置为5000000";
 * S1 MemCopy2DCheckParam). Zero width/height succeeds before the NULL checks (S1
 * CheckMemcpy2dParam). */
static void case_memcpy2d_limits(void) {
    setup();
    void *d = NULL;
    char host[64];
    CHECK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_CODE(aclrtMemcpy2d(d, 5000001, host, 5000001, 5000001, 1, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtMemcpy2d(d, 16, host, 16, 16, 5242881, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtMemcpy2dAsync(d, 16, host, 16, 16, 5242881, ACL_MEMCPY_HOST_TO_DEVICE, NULL), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtMemcpy2d(NULL, 16, NULL, 16, 0, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy2d(NULL, 16, NULL, 16, 16, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtFree(d));
    teardown();
}

/* aclrtMemcpy2dAsync supports ACL_MEMCPY_DEVICE_TO_DEVICE on A2/A3 (D aclrtMemcpy2dAsync
 * 约束说明; S1 CheckMemcpy2dAsyncKind). */
static void case_memcpy2d_async_d2d(void) {
    setup();
    aclrtStream s = NULL;
    void *a = NULL, *b = NULL;
    char host[256], back[256];
    for (int i = 0; i < 256; i++) host[i] = (char)(i + 3);
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtMalloc(&a, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(a, 256, host, 256, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemset(b, 256, 0, 256));
    /* 4 rows of 10 bytes, source pitch 32, destination pitch 16. */
    CHECK(aclrtMemcpy2dAsync(b, 16, a, 32, 10, 4, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(back, 256, b, 256, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int r = 0; r < 4; r++) {
        for (int c = 0; c < 16; c++) {
            char want = c < 10 ? host[r * 32 + c] : 0;
            EXPECT(back[r * 16 + c] == want);
        }
    }
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* aclrtMemcpyAsync with ACL_MEMCPY_HOST_TO_HOST: ACL_ERROR_RT_FEATURE_NOT_SUPPORT
 * (D aclrtMemcpyAsync 约束说明 "若传入的kind为ACL_MEMCPY_HOST_TO_HOST时,接口返回报错
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT"). */
static void case_memcpy_async_h2h(void) {
    setup();
    aclrtStream s = NULL;
    char a[64] = {1}, b[64] = {0};
    CHECK(aclrtCreateStream(&s));
    EXPECT_CODE(aclrtMemcpyAsync(b, 64, a, 64, ACL_MEMCPY_HOST_TO_HOST, s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL);
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* aclrtMemcpy's kind is a reserved parameter: the direction comes from the pointers (D
 * aclrtMemcpy "kind: 预留参数,配置枚举值中的值无效,系统内部会根据源内存地址指针、目的内存地址
 * 指针判断"; S1 MemcpyKindAutoCorrect forces the kind for known host/device locations). */
static void case_memcpy_kind_from_pointers(void) {
    setup();
    void *d = NULL, *d2 = NULL, *ph = NULL;
    char back[64];
    CHECK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&d2, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMallocHost(&ph, 64));
    memset(ph, 0x5a, 64);
    /* pinned host -> device, called with the D2H kind. */
    CHECK(aclrtMemcpy(d, 64, ph, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    /* device -> device, called with the H2H kind. */
    CHECK(aclrtMemcpy(d2, 64, d, 64, ACL_MEMCPY_HOST_TO_HOST));
    CHECK(aclrtMemcpy(back, 64, d2, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++) EXPECT(back[i] == 0x5a);
    CHECK(aclrtFreeHost(ph));
    CHECK(aclrtFree(d));
    CHECK(aclrtFree(d2));
    teardown();
}

/* aclrtGetMemInfo with an attribute outside aclrtMemAttr: the lower runtime's
 * RT_ERROR_INVALID_MEMORY_TYPE, ACL_ERROR_RT_INVALID_MEMORY_TYPE (S1 MemGetInfoEx). */
static void case_meminfo_bad_attr(void) {
    setup();
    size_t fr = 0, tot = 0;
    EXPECT_CODE(aclrtGetMemInfo((aclrtMemAttr)99, &fr, &tot), ACL_ERROR_RT_INVALID_MEMORY_TYPE, NULL);
    teardown();
}

/* Synchronize with timeout 0: the runtime accepts -1 or > 0 only, RT_ERROR_INVALID_VALUE ->
 * ACL_ERROR_RT_PARAM_INVALID (D: "-1:表示永久等待; >0:配置具体的超时时间"; S1
 * ApiErrorDecorator::StreamSynchronize / EventSynchronize / DeviceSynchronize reject
 * `(timeout < -1) || (timeout == 0)`). */
static void case_sync_timeout_zero(void) {
    setup();
    aclrtStream s = NULL;
    aclrtEvent e = NULL;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateEvent(&e));
    CHECK(aclrtRecordEvent(e, s));
    CHECK(aclrtSynchronizeStream(s));
    EXPECT_CODE(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtSynchronizeEventWithTimeout(e, 0), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtSynchronizeDeviceWithTimeout(0), ACL_ERROR_RT_PARAM_INVALID, NULL);
    CHECK(aclrtSynchronizeStreamWithTimeout(s, 1000));
    CHECK(aclrtSynchronizeEventWithTimeout(e, 1000));
    CHECK(aclrtSynchronizeDeviceWithTimeout(1000));
    CHECK(aclrtDestroyEvent(e));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* aclrtResetDevice of a device this process never set: RT_ERROR_CONTEXT_DEL ("The device
 * has not been set or has already been reset") -> ACL_ERROR_RT_CONTEXT_RELEASE_ERROR (S1
 * ApiErrorDecorator::DeviceReset and the runtime's error map). */
static void case_reset_unset_device(void) {
    setup();
    EXPECT_CODE(aclrtResetDevice(3), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, NULL);
    CHECK(aclrtSetDevice(3));
    CHECK(aclrtResetDevice(3));
    EXPECT_CODE(aclrtResetDevice(3), ACL_ERROR_RT_CONTEXT_RELEASE_ERROR, NULL);
    teardown();
}

/* Profiling sessions (D "Profiling数据采集接口 总体约束"): start/stop/finalize before
 * aclprofInit fail; a second aclprofStart whose devices repeat a running session's fails;
 * sessions on different devices may run together (the documented wrong order is only the
 * one that repeats Device 1); aclprofInit/aclprofFinalize may be paired more than once. */
static void case_prof_sessions(void) {
    setup();
    uint32_t d0[1] = {0}, d1[1] = {1};
    aclprofConfig *c0 = aclprofCreateConfig(d0, 1, ACL_AICORE_NONE, NULL, ACL_PROF_ACL_API);
    aclprofConfig *c0b = aclprofCreateConfig(d0, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME);
    aclprofConfig *c1 = aclprofCreateConfig(d1, 1, ACL_AICORE_NONE, NULL, ACL_PROF_ACL_API);
    EXPECT(c0 != NULL && c0b != NULL && c1 != NULL);
    EXPECT(aclprofStart(c0) != ACL_SUCCESS); /* before aclprofInit */
    char dir[4096];
    EXPECT(getcwd(dir, sizeof dir) != NULL);
    CHECK(aclprofInit(dir, strlen(dir)));
    CHECK(aclprofStart(c0));
    EXPECT(aclprofStart(c0b) != ACL_SUCCESS); /* device 0 again */
    CHECK(aclprofStart(c1));                  /* device 1: allowed */
    CHECK(aclprofStop(c1));
    CHECK(aclprofStop(c0));
    CHECK(aclprofFinalize());
    CHECK(aclprofInit(dir, strlen(dir)));
    CHECK(aclprofFinalize());
    CHECK(aclprofDestroyConfig(c0));
    CHECK(aclprofDestroyConfig(c0b));
    CHECK(aclprofDestroyConfig(c1));
    teardown();
}

/* D aclrtSetDevice: threads that set the same device share its default context; D
 * aclrtResetDevice: reference counted, the last reset frees the default context;
 * aclrtResetDeviceForce frees it whatever the count. */
static aclrtContext thread_ctx = NULL;
static void *set_device_thread(void *arg) {
    (void)arg;
    if (aclrtSetDevice(0) != ACL_SUCCESS || aclrtGetCurrentContext(&thread_ctx) != ACL_SUCCESS) {
        thread_ctx = NULL;
    }
    return NULL;
}
static void case_device_refcount(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtContext mine = NULL, now = NULL;
    CHECK(aclrtGetCurrentContext(&mine));
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, set_device_thread, NULL) == 0);
    EXPECT(pthread_join(t, NULL) == 0);
    EXPECT(thread_ctx == mine); /* one default context per device per process */
    CHECK(aclrtResetDevice(0)); /* two sets, one reset: still alive */
    CHECK(aclrtGetCurrentContext(&now));
    EXPECT(now == mine);
    void *d = NULL;
    CHECK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtFree(d));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtResetDeviceForce(0)); /* three sets, one forced reset frees it */
    EXPECT_CODE(aclrtGetCurrentContext(&now), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    CHECK(aclFinalize());
}

/* aclInit config "defaultDevice": runtime calls work without aclrtSetDevice, on the
 * configured device, in every thread (D dev guide 初始化: {"defaultDevice":{"default_device":"0"}}
 * "启用DefaultDevice后,可以不显式调用aclrtSetDevice直接调用运行时接口"; D aclrtGetDevice: a device
 * can be specified "by enabling default device using aclInit"). */
static int32_t thread_dev = -1;
static void *default_device_thread(void *arg) {
    (void)arg;
    void *p = NULL;
    if (aclrtGetDevice(&thread_dev) != ACL_SUCCESS) thread_dev = -2;
    if (aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS || aclrtFree(p) != ACL_SUCCESS) {
        thread_dev = -3;
    }
    return NULL;
}
static void case_default_device_config(void) {
    write_file("defdev.json", "{\"defaultDevice\": {\"default_device\": \"1\"}}");
    CHECK(aclInit("defdev.json"));
    int32_t dev = -1;
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 1);
    void *p = NULL;
    CHECK(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtMemsetAsync(p, 64, 7, 64, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtFree(p));
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, default_device_thread, NULL) == 0);
    EXPECT(pthread_join(t, NULL) == 0);
    EXPECT(thread_dev == 1);
    /* An explicit aclrtSetDevice takes precedence. */
    CHECK(aclrtSetDevice(2));
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 2);
    CHECK(aclrtResetDevice(2));
    CHECK(aclFinalize());
}

/* aclInit config "err_msg_mode": only "0" (thread) and "1" (process) are valid; anything
 * else is ACL_ERROR_INVALID_PARAM (S1 acl.cpp HandleErrorManagerConfig). */
static void case_err_msg_mode_config(void) {
    write_file("badmode.json", "{\"err_msg_mode\": \"2\"}");
    EXPECT_CODE(aclInit("badmode.json"), ACL_ERROR_INVALID_PARAM, NULL);
    write_file("thread.json", "{\"err_msg_mode\": \"0\"}");
    CHECK(aclInit("thread.json"));
    CHECK(aclFinalize());
}

/* aclrtGetMemInfo reports device memory; attributes the hardware lacks give free = total = 0
 * (D aclrtGetMemInfo 约束说明: "请根据实际硬件支持的情况,选择对应属性的内存,否则调用本接口获取到的空闲
 * 大小和总大小都为0", which applies to Atlas training and A2 training products; Ascend910B1 has
 * HBM and no device DDR). */
static void case_meminfo_ddr_on_hbm_device(void) {
    setup();
    size_t fr = 1, tot = 1;
    CHECK(aclrtGetMemInfo(ACL_DDR_MEM, &fr, &tot));
    EXPECT(fr == 0 && tot == 0);
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
    EXPECT(tot > 0 && fr > 0 && fr <= tot);
    teardown();
}

/* aclrtMemcpyAsync with pageable (malloc) host memory returns only once the copy is done;
 * with aclrtMallocHost memory it is asynchronous (D aclrtMemcpyAsync 功能说明, 8.3 to 9.0:
 * "当Host内存是非锁页内存时,本接口在内存复制任务完成后才返回"; S1 MemcpyAsync: pageable memory
 * → StreamSynchronize + MemCopySync). The stream is held by a host function that another
 * thread releases, so a copy that returned early would see the old data. */
static void *release_later(void *arg) {
    (void)arg;
    usleep(200 * 1000);
    release_flag = 1;
    return NULL;
}
static void case_pageable_async_is_sync(void) {
    setup();
    aclrtStream s = NULL;
    void *d = NULL;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    char *buf = malloc(4096);
    EXPECT(buf != NULL);
    /* H2D: the program may reuse its buffer as soon as the call returns. */
    memset(buf, 0x11, 4096);
    release_flag = 0;
    CHECK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, release_later, NULL) == 0);
    CHECK(aclrtMemcpyAsync(d, 4096, buf, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
    memset(buf, 0x22, 4096);
    EXPECT(pthread_join(t, NULL) == 0);
    CHECK(aclrtSynchronizeStream(s));
    char back[4096];
    CHECK(aclrtMemcpy(back, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 4096; i++) EXPECT(back[i] == 0x11);
    /* D2H: the data is in the buffer when the call returns. */
    memset(buf, 0, 4096);
    release_flag = 0;
    CHECK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    EXPECT(pthread_create(&t, NULL, release_later, NULL) == 0);
    CHECK(aclrtMemcpyAsync(buf, 4096, d, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
    for (int i = 0; i < 4096; i++) EXPECT(buf[i] == 0x11);
    EXPECT(pthread_join(t, NULL) == 0);
    CHECK(aclrtSynchronizeStream(s));
    free(buf);
    CHECK(aclrtFree(d));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* Context codes (S1 ApiImpl::ContextDestroy as quoted in hicann/runtime docs: a primary
 * (default) context or a context no longer valid → RT_ERROR_CONTEXT_NULL → 107002;
 * ApiErrorDecorator::ContextSetCurrent: an invalid context → RT_ERROR_INVALID_VALUE → 107000). */
static void case_context_codes(void) {
    setup();
    aclrtContext def = NULL, mine = NULL;
    CHECK(aclrtGetCurrentContext(&def));
    EXPECT_CODE(aclrtDestroyContext(def), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    CHECK(aclrtCreateContext(&mine, 1));
    CHECK(aclrtDestroyContext(mine));
    EXPECT_CODE(aclrtDestroyContext(mine), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    EXPECT_CODE(aclrtSetCurrentContext(mine), ACL_ERROR_RT_PARAM_INVALID, NULL);
    CHECK(aclrtSetCurrentContext(def));
    teardown();
}

/* Timestamps of events that have none (S1 Event::ElapsedTime / Event::GetTimeStamp: never
 * recorded or reset → RT_ERROR_EVENT_RECORDER_NULL → ACL_ERROR_RT_INTERNAL_ERROR 507000;
 * recorded but not yet reached → timestamp UINT64_MAX → RT_ERROR_EVENT_TIMESTAMP_INVALID
 * 107006). */
static void case_event_timestamp_codes(void) {
    setup();
    aclrtStream s = NULL;
    aclrtEvent a = NULL, b = NULL;
    uint64_t ts = 0;
    float ms = 0;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateEvent(&a));
    CHECK(aclrtCreateEvent(&b));
    EXPECT_CODE(aclrtEventGetTimestamp(a, &ts), ACL_ERROR_RT_INTERNAL_ERROR, NULL);
    EXPECT_CODE(aclrtEventElapsedTime(&ms, a, b), ACL_ERROR_RT_INTERNAL_ERROR, NULL);
    release_flag = 0;
    CHECK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    CHECK(aclrtRecordEvent(a, s));
    EXPECT_CODE(aclrtEventGetTimestamp(a, &ts), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, NULL);
    release_flag = 1;
    CHECK(aclrtRecordEvent(b, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtEventElapsedTime(&ms, a, b));
    CHECK(aclrtDestroyEvent(a));
    CHECK(aclrtDestroyEvent(b));
    CHECK(aclrtDestroyStream(s));
    teardown();
}

/* err_msg_mode "1": aclGetRecentErrMsg reports the process's messages, so a message of a
 * call that failed on another thread is visible (D aclGetRecentErrMsg: "获取进程级别、还是线程
 * 级别的错误描述信息由aclInit接口中的err_msg_mode配置控制,默认线程级别"). */
static void *fail_on_thread(void *arg) {
    (void)arg;
    (void)aclrtSetDevice(4242);
    return NULL;
}
static void case_err_msg_process_mode(void) {
    write_file("proc.json", "{\"err_msg_mode\": \"1\"}");
    CHECK(aclInit("proc.json"));
    pthread_t t;
    EXPECT(pthread_create(&t, NULL, fail_on_thread, NULL) == 0);
    EXPECT(pthread_join(t, NULL) == 0);
    const char *m = aclGetRecentErrMsg();
    EXPECT(m != NULL && strstr(m, "4242") != NULL);
    EXPECT(aclGetRecentErrMsg() == NULL);
    CHECK(aclFinalize());
}

/* D aclrtSubscribeReport 约束说明: one report thread may serve several streams of one device,
 * but "同一个进程内，在不同的Device上注册回调函数的线程时，不能指定同一个线程ID". The code is not
 * documented; the call must fail. */
static void case_subscribe_across_devices(void) {
    setup();
    aclrtStream s0 = NULL, s0b = NULL, s1 = NULL;
    CHECK(aclrtCreateStream(&s0));
    CHECK(aclrtCreateStream(&s0b));
    uint64_t me = (uint64_t)pthread_self();
    CHECK(aclrtSubscribeReport(me, s0));
    CHECK(aclrtSubscribeReport(me, s0b)); /* same device: allowed */
    CHECK(aclrtSetDevice(1));
    CHECK(aclrtCreateStream(&s1));
    aclError e = aclrtSubscribeReport(me, s1);
    printf("subscribe on a second device -> %d\n", (int)e);
    EXPECT(e != ACL_SUCCESS);
    CHECK(aclrtDestroyStream(s1));
    CHECK(aclrtResetDevice(1));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtUnSubscribeReport(me, s0));
    CHECK(aclrtUnSubscribeReport(me, s0b));
    CHECK(aclrtDestroyStream(s0));
    CHECK(aclrtDestroyStream(s0b));
    CHECK(aclrtResetDevice(0));
    teardown();
}

/* 2-D copies whose kind CANN's ACL layer accepts (H2D, D2H, DEFAULT; D2D when async) but
 * whose pointers make an unsupported direction are refused by the runtime:
 * ACL_ERROR_RT_PARAM_INVALID (S1 ApiErrorDecorator::MemCopy2DSync "Memcpy2dSync supports only
 * H2D or D2H", MemCopy2DAsync "supports only H2D, D2H, or D2D"). Kinds the ACL layer refuses
 * stay ACL_ERROR_INVALID_PARAM. */
static void case_memcpy2d_resolved_direction(void) {
    setup();
    void *a = NULL, *b = NULL;
    char h[256], h2[256];
    CHECK(aclrtMalloc(&a, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, 256, ACL_MEM_MALLOC_HUGE_FIRST));
    EXPECT_CODE(aclrtMemcpy2d(a, 64, b, 64, 16, 2, ACL_MEMCPY_DEFAULT), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtMemcpy2dAsync(h, 64, h2, 64, 16, 2, ACL_MEMCPY_DEFAULT, NULL), ACL_ERROR_RT_PARAM_INVALID, NULL);
    EXPECT_CODE(aclrtMemcpy2d(a, 64, b, 64, 16, 2, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT_CODE(aclrtMemcpy2dAsync(h, 64, h2, 64, 16, 2, ACL_MEMCPY_HOST_TO_HOST, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    teardown();
}

struct named {
    const char *name;
    void (*fn)(void);
};

int main(int argc, char **argv) {
    static const struct named cases[] = {
        {"devices", case_devices},
        {"stream_timeout", case_stream_timeout},
        {"events", case_events},
        {"callbacks", case_callbacks},
        {"helpers", case_helpers},
        {"memcpy2d_checks", case_memcpy2d_checks},
        {"memcpy_kinds", case_memcpy_kinds},
        {"errmsg_accumulates", case_errmsg_accumulates},
        {"init_empty_config", case_init_empty_config},
        {"capability_bad_device", case_capability_bad_device},
        {"zero_count_null", case_zero_count_null},
        {"count_gt_destmax", case_count_gt_destmax},
        {"memcpy2d_limits", case_memcpy2d_limits},
        {"memcpy2d_async_d2d", case_memcpy2d_async_d2d},
        {"memcpy_async_h2h", case_memcpy_async_h2h},
        {"memcpy_kind_from_pointers", case_memcpy_kind_from_pointers},
        {"meminfo_bad_attr", case_meminfo_bad_attr},
        {"sync_timeout_zero", case_sync_timeout_zero},
        {"reset_unset_device", case_reset_unset_device},
        {"prof_sessions", case_prof_sessions},
        {"device_refcount", case_device_refcount},
        {"default_device_config", case_default_device_config},
        {"err_msg_mode_config", case_err_msg_mode_config},
        {"meminfo_ddr", case_meminfo_ddr_on_hbm_device},
        {"pageable_async_is_sync", case_pageable_async_is_sync},
        {"context_codes", case_context_codes},
        {"event_timestamp_codes", case_event_timestamp_codes},
        {"err_msg_process_mode", case_err_msg_process_mode},
        {"subscribe_across_devices", case_subscribe_across_devices},
        {"memcpy2d_resolved_direction", case_memcpy2d_resolved_direction},
    };
    if (argc != 2) {
        fprintf(stderr, "usage: conf_cases CASE\n");
        return 2;
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (strcmp(cases[i].name, argv[1]) == 0) {
            cases[i].fn();
            printf("case %s passed\n", argv[1]);
            return 0;
        }
    }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}
