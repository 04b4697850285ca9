/* Runtime calls as a stranger writes them from CANN's runtime API reference (hiascend.com
 * appdevg pages) and checks them against the documented behaviour and CANN 8.5's code
 * (hicann/runtime 8.5.0 src/acl/aclrt_impl):
 * - pitched 2-D copies host -> device -> host (sync and async), the padding left alone;
 *   a zero height or width is ACL_ERROR_INVALID_PARAM (CheckMemcpy2dParam);
 * - NULL pointers are refused by the ACL layer before anything else, also with count 0
 *   (aclrtMemcpy[Async], aclrtMemset[Async]); a zero-byte copy of valid memory succeeds;
 * - aclrtDeviceEnablePeerAccess with reserved flags != 0: ACL_ERROR_FEATURE_UNSUPPORTED;
 * - aclrtStreamAbort(NULL): the default stream is not supported in 8.5 ("不支持传NULL");
 * - aclrtCreateStreamWithConfig: out-of-range priorities clamp, unknown flag bits are ignored;
 *   aclrtSetStreamFailureMode: not on the default stream, stop-on-failure is final;
 * - aclrtGetDeviceInfo(ACL_DEV_ATTR_AICPU_CORE_NUM): the AI CPU count (ai_cpu_cnt = 6 on
 *   Ascend910B); aclrtSetDeviceSatMode out of range: 107000 (the runtime's check);
 * - events: elapsed time between TIME_LINE events around a host function, wait status;
 *   creation flags as the 8.5 runtime checks them (EXTERNAL / DEVICE_USE_ONLY / IPC alone).
 * Prints "stranger_rt passed". */
#define _GNU_SOURCE
#include <unistd.h>
#include "common.h"

static void sleep_ms(void *arg) { usleep((useconds_t)(intptr_t)arg * 1000); }

static void pitched_copies(aclrtStream s) {
    enum { W = 5, H = 4, SP = 8, DP = 16, OP = 32 };
    unsigned char src[SP * H], back[DP * H], out[OP * H];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(i * 7 + 1);
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, DP * H, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(dev, DP * H, 0xEE, DP * H));
    CHECK(aclrtMemcpy2d(dev, DP, src, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(back, sizeof back, dev, DP * H, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t r = 0; r < H; r++)
        for (size_t c = 0; c < DP; c++)
            EXPECT(back[r * DP + c] == (c < W ? src[r * SP + c] : 0xEE));
    memset(out, 0x11, sizeof out);
    CHECK(aclrtMemcpy2d(out, OP, dev, DP, W, H, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t r = 0; r < H; r++)
        for (size_t c = 0; c < OP; c++)
            EXPECT(out[r * OP + c] == (c < W ? src[r * SP + c] : 0x11));
    /* Asynchronous, from and to aclrtMallocHost memory, after an asynchronous memset. */
    void *hp = NULL, *ho = NULL;
    CHECK(aclrtMallocHost(&hp, SP * H));
    CHECK(aclrtMallocHost(&ho, DP * H));
    memcpy(hp, src, SP * H);
    CHECK(aclrtMemsetAsync(dev, DP * H, 0x5A, DP * H, s));
    CHECK(aclrtMemcpy2dAsync(dev, DP, hp, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE, s));
    CHECK(aclrtMemcpyAsync(ho, DP * H, dev, DP * H, ACL_MEMCPY_DEVICE_TO_HOST, s));
    CHECK(aclrtSynchronizeStream(s));
    for (size_t r = 0; r < H; r++)
        for (size_t c = 0; c < DP; c++)
            EXPECT(((unsigned char *)ho)[r * DP + c] == (c < W ? src[r * SP + c] : 0x5A));
    /* Width above a pitch, zero height or width: ACL_ERROR_INVALID_PARAM. */
    EXPECT_CODE(aclrtMemcpy2d(dev, 4, src, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "width");
    EXPECT_CODE(aclrtMemcpy2d(dev, DP, src, SP, W, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "height");
    EXPECT_CODE(aclrtMemcpy2d(dev, DP, src, SP, 0, H, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "width");
    EXPECT_CODE(aclrtMemcpy2dAsync(dev, DP, hp, SP, W, 0, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM, "height");
    EXPECT_CODE(aclrtMemcpy2d(NULL, DP, src, SP, 0, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst");
    /* NULL first, then count 0 succeeds. */
    EXPECT_CODE(aclrtMemsetAsync(NULL, 0, 0, 0, s), ACL_ERROR_INVALID_PARAM, "devPtr");
    EXPECT_CODE(aclrtMemset(NULL, 0, 0, 0), ACL_ERROR_INVALID_PARAM, "devPtr");
    EXPECT_CODE(aclrtMemcpy(NULL, 0, src, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM, "dst");
    EXPECT_CODE(aclrtMemcpyAsync(dev, 0, NULL, 0, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM, "src");
    CHECK(aclrtMemcpy(dev, DP * H, src, 0, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemsetAsync(dev, DP * H, 0, 0, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtFreeHost(hp));
    CHECK(aclrtFreeHost(ho));
    CHECK(aclrtFree(dev));
    printf("pitched copies ok\n");
}

static void peer_and_abort(aclrtStream s) {
    int32_t can = 0;
    CHECK(aclrtDeviceCanAccessPeer(&can, 0, 1));
    EXPECT(can == 1);
    /* flags is reserved: anything but 0 is "not supported". */
    EXPECT_CODE(aclrtDeviceEnablePeerAccess(1, 1), ACL_ERROR_FEATURE_UNSUPPORTED, "flags");
    CHECK(aclrtDeviceEnablePeerAccess(1, 0));
    CHECK(aclrtDeviceDisablePeerAccess(1));
    /* aclrtStreamAbort: not the default stream; a created stream is aborted and usable. */
    EXPECT_CODE(aclrtStreamAbort(NULL), ACL_ERROR_RT_PARAM_INVALID, "NULL");
    CHECK(aclrtLaunchHostFunc(s, sleep_ms, (void *)(intptr_t)200));
    CHECK(aclrtLaunchHostFunc(s, sleep_ms, (void *)(intptr_t)2000));
    usleep(50 * 1000);
    CHECK(aclrtStreamAbort(s));
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtStreamQuery(s, &st));
    EXPECT(st == ACL_STREAM_STATUS_COMPLETE);
    printf("peer access and abort ok\n");
}

/* aclrtCreateStreamWithConfig: "如果设置的优先级超过取值范围，则就近修正为边界值"; other flag
 * values give a stream like aclrtCreateStream's. */
static void stream_config(void) {
    int32_t least = -1, greatest = -1;
    CHECK(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    EXPECT(least == 7 && greatest == 0);
    aclrtStream s = NULL;
    uint32_t prio = 99, flags = 99;
    CHECK(aclrtCreateStreamWithConfig(&s, 100, ACL_STREAM_FAST_LAUNCH | 0x4000));
    CHECK(aclrtStreamGetPriority(s, &prio));
    CHECK(aclrtStreamGetFlags(s, &flags));
    EXPECT(prio == (uint32_t)least && flags == ACL_STREAM_FAST_LAUNCH);
    void *d = NULL;
    int v = 41, o = 0;
    CHECK(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpyAsync(d, 64, &v, sizeof v, ACL_MEMCPY_HOST_TO_DEVICE, s));
    CHECK(aclrtMemcpyAsync(&o, sizeof o, d, sizeof o, ACL_MEMCPY_DEVICE_TO_HOST, s));
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(o == 41);
    CHECK(aclrtFree(d));
    CHECK(aclrtDestroyStream(s));
    /* Failure mode (8.5 StreamSetMode): not the default stream; stop is final. */
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE));
    CHECK(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE));
    CHECK(aclrtSetStreamFailureMode(s, ACL_STOP_ON_FAILURE));
    EXPECT_CODE(aclrtSetStreamFailureMode(s, ACL_CONTINUE_ON_FAILURE), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL);
    EXPECT_CODE(aclrtSetStreamFailureMode(NULL, ACL_STOP_ON_FAILURE), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL);
    CHECK(aclrtDestroyStream(s));
    printf("stream config ok\n");
}

static void device_info(void) {
    int64_t v = -1;
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICPU_CORE_NUM, &v));
    EXPECT(v == 6);
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_AICORE_CORE_NUM, &v));
    EXPECT(v == 24);
    CHECK(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &v));
    EXPECT(v == 48);
    /* Saturation mode: the range is the runtime's check (107000). */
    aclrtFloatOverflowMode m = ACL_RT_OVERFLOW_MODE_UNDEF;
    CHECK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
    CHECK(aclrtGetDeviceSatMode(&m));
    EXPECT(m == ACL_RT_OVERFLOW_MODE_SATURATION);
    EXPECT_CODE(aclrtSetDeviceSatMode((aclrtFloatOverflowMode)5), ACL_ERROR_RT_PARAM_INVALID, "mode = 5");
    printf("device info ok\n");
}

static void timed_events(aclrtStream s) {
    aclrtEvent a = NULL, b = NULL;
    CHECK(aclrtCreateEventWithFlag(&a, ACL_EVENT_TIME_LINE));
    CHECK(aclrtCreateEventWithFlag(&b, ACL_EVENT_TIME_LINE));
    aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    CHECK(aclrtQueryEventStatus(a, &rs)); /* never recorded: not ready */
    EXPECT(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    CHECK(aclrtRecordEvent(a, s));
    CHECK(aclrtLaunchHostFunc(s, sleep_ms, (void *)(intptr_t)150));
    CHECK(aclrtRecordEvent(b, s));
    aclrtEventWaitStatus ws = ACL_EVENT_WAIT_STATUS_RESERVED;
    CHECK(aclrtQueryEventWaitStatus(b, &ws));
    EXPECT(ws == ACL_EVENT_WAIT_STATUS_NOT_READY);
    CHECK(aclrtSynchronizeEvent(b));
    CHECK(aclrtQueryEventWaitStatus(b, &ws));
    EXPECT(ws == ACL_EVENT_WAIT_STATUS_COMPLETE);
    float ms = 0;
    CHECK(aclrtEventElapsedTime(&ms, a, b));
    EXPECT(ms >= 120.0f && ms < 5000.0f);
    CHECK(aclrtDestroyEvent(a));
    CHECK(aclrtDestroyEvent(b));
    printf("timed events ok (%.1f ms)\n", ms);
}

/* Creation flags (CANN 8.5 EventCreate / EventCreateEx): ACL_EVENT_EXTERNAL and
 * ACL_EVENT_DEVICE_USE_ONLY stand alone; ACL_EVENT_IPC only with aclrtCreateEventExWithFlag,
 * alone; the Ex function takes neither EXTERNAL nor DEVICE_USE_ONLY. */
static void event_flags(void) {
    aclrtEvent e = NULL;
    CHECK(aclrtCreateEventWithFlag(&e, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
    CHECK(aclrtDestroyEvent(e));
    CHECK(aclrtCreateEventWithFlag(&e, ACL_EVENT_EXTERNAL));
    CHECK(aclrtDestroyEvent(e));
    EXPECT_CODE(aclrtCreateEventWithFlag(&e, ACL_EVENT_EXTERNAL | ACL_EVENT_SYNC), ACL_ERROR_RT_PARAM_INVALID, "cannot be combined");
    EXPECT_CODE(aclrtCreateEventWithFlag(&e, ACL_EVENT_DEVICE_USE_ONLY | ACL_EVENT_TIME_LINE), ACL_ERROR_RT_PARAM_INVALID, "cannot be combined");
    EXPECT_CODE(aclrtCreateEventWithFlag(&e, ACL_EVENT_IPC), ACL_ERROR_RT_PARAM_INVALID, "0x40");
    EXPECT_CODE(aclrtCreateEventWithFlag(&e, 0), ACL_ERROR_RT_PARAM_INVALID, "flag = 0x0");
    CHECK(aclrtCreateEventExWithFlag(&e, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
    CHECK(aclrtDestroyEvent(e));
    EXPECT_CODE(aclrtCreateEventExWithFlag(&e, ACL_EVENT_IPC | ACL_EVENT_SYNC), ACL_ERROR_RT_PARAM_INVALID, "cannot be combined");
    EXPECT_CODE(aclrtCreateEventExWithFlag(&e, ACL_EVENT_EXTERNAL), ACL_ERROR_RT_PARAM_INVALID, "0x20");
    EXPECT_CODE(aclrtCreateEventExWithFlag(&e, ACL_EVENT_DEVICE_USE_ONLY), ACL_ERROR_RT_PARAM_INVALID, "0x10");
    printf("event flags ok\n");
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    pitched_copies(s);
    peer_and_abort(s);
    stream_config();
    device_info();
    timed_events(s);
    event_flags();
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("stranger_rt passed\n");
    return 0;
}
