/* Runtime combinations a typical program touches, written from CANN's documentation alone
 * (the "stranger" probes): contexts moved between threads, aclGetRecentErrMsg at process
 * level (aclInit config err_msg_mode "1"), streams waiting on events of another device,
 * callbacks on the default stream, aclrtGetMemInfo following allocations, aclrtMemcpy2d
 * data, elapsed time and wait status of events. Prints "rt_stranger passed". */
#include <atomic>
#include <thread>
#include <unistd.h>

#include "common.h"

static std::atomic<int> g_hits{0};
static void add_hits(void *p) { g_hits += (int)(intptr_t)p; }

/* aclInit's config: err_msg_mode "1" = aclGetRecentErrMsg reports the errors of every thread. */
static void process_level_messages(void) {
    /* In the working directory (the test's scratch directory). */
    const char *path = "acl.json";
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL);
    fputs("{\"err_msg_mode\":\"1\"}", f);
    fclose(f);
    CHECK(aclInit(path));
    std::thread([] { EXPECT(aclrtSetDevice(99) != ACL_SUCCESS); }).join();
    const char *m = aclGetRecentErrMsg();
    EXPECT(m != NULL && strstr(m, "aclrtSetDevice") != NULL && strstr(m, "99") != NULL);
    /* Read and cleared: the next read has nothing. */
    EXPECT(aclGetRecentErrMsg() == NULL);
    printf("process-level error messages ok\n");
}

/* aclrtCreateContext makes the context current on the calling thread; another thread that
 * sets it current works on its device. */
static void contexts_across_threads(void) {
    aclrtContext c1 = NULL, c0 = NULL, cur = NULL;
    CHECK(aclrtCreateContext(&c1, 1));
    CHECK(aclrtGetCurrentContext(&cur));
    EXPECT(cur == c1);
    int32_t dev = -1;
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 1);
    CHECK(aclrtCreateContext(&c0, 0));
    std::thread t([c1] {
        /* A fresh thread has no current context. */
        aclrtContext c = NULL;
        EXPECT_CODE(aclrtGetCurrentContext(&c), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
        CHECK(aclrtSetCurrentContext(c1));
        CHECK(aclrtGetCurrentContext(&c));
        EXPECT(c == c1);
        int32_t d = -1;
        CHECK(aclrtGetDevice(&d));
        EXPECT(d == 1);
        void *p = NULL;
        CHECK(aclrtMalloc(&p, 1024, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclrtFree(p));
    });
    t.join();
    CHECK(aclrtSetCurrentContext(c0));
    CHECK(aclrtGetDevice(&dev));
    EXPECT(dev == 0);
    CHECK(aclrtDestroyContext(c1));
    CHECK(aclrtDestroyContext(c0));
    /* The destroyed context was current: the thread has none now. */
    EXPECT_CODE(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL, NULL);
    printf("contexts across threads ok\n");
}

/* aclrtGetMemInfo(ACL_HBM_MEM): free drops by an allocation, total stays. */
static void mem_info(void) {
    size_t fr = 0, tot = 0, fr2 = 0, tot2 = 0;
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
    EXPECT(tot > 0 && fr <= tot);
    void *p = NULL;
    CHECK(aclrtMalloc(&p, 64 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &fr2, &tot2));
    EXPECT(tot2 == tot && fr2 + (64 << 20) <= fr);
    CHECK(aclrtFree(p));
    printf("aclrtGetMemInfo ok\n");
}

/* A stream of device 1 waits for an event recorded on a stream of device 0, then copies what
 * device 0 wrote (peer access enabled both ways). */
static void cross_device_wait(void) {
    CHECK(aclrtSetDevice(0));
    aclrtStream s0, s1;
    CHECK(aclrtCreateStream(&s0));
    aclrtEvent ev, t0, t1;
    CHECK(aclrtCreateEvent(&ev));
    CHECK(aclrtCreateEventWithFlag(&t0, ACL_EVENT_TIME_LINE));
    CHECK(aclrtCreateEventWithFlag(&t1, ACL_EVENT_TIME_LINE));
    void *d0 = NULL, *h = NULL;
    CHECK(aclrtMalloc(&d0, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMallocHost(&h, 1 << 20));
    memset(h, 7, 1 << 20);
    CHECK(aclrtDeviceEnablePeerAccess(1, 0));
    CHECK(aclrtRecordEvent(t0, s0));
    for (int i = 0; i < 8; i++)
        CHECK(aclrtMemsetAsync(d0, 1 << 20, i, 1 << 20, s0));
    CHECK(aclrtMemcpyAsync(d0, 1 << 20, h, 1 << 20, ACL_MEMCPY_HOST_TO_DEVICE, s0));
    CHECK(aclrtRecordEvent(t1, s0));
    CHECK(aclrtRecordEvent(ev, s0));
    CHECK(aclrtSetDevice(1));
    CHECK(aclrtDeviceEnablePeerAccess(0, 0));
    CHECK(aclrtCreateStream(&s1));
    void *d1 = NULL;
    CHECK(aclrtMalloc(&d1, 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtStreamWaitEvent(s1, ev));
    CHECK(aclrtMemcpyAsync(d1, 1 << 20, d0, 1 << 20, ACL_MEMCPY_DEVICE_TO_DEVICE, s1));
    CHECK(aclrtSynchronizeStream(s1));
    unsigned char back[4096];
    CHECK(aclrtMemcpy(back, sizeof back, (char *)d1 + (1 << 20) - 4096, 4096,
                      ACL_MEMCPY_DEVICE_TO_HOST));
    for (unsigned i = 0; i < sizeof back; i++)
        EXPECT(back[i] == 7);
    /* The wait let s1 run only after ev completed: both statuses say complete. */
    aclrtEventRecordedStatus st;
    CHECK(aclrtQueryEventStatus(ev, &st));
    EXPECT(st == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    aclrtEventWaitStatus ws;
    CHECK(aclrtQueryEventWaitStatus(ev, &ws));
    EXPECT(ws == ACL_EVENT_WAIT_STATUS_COMPLETE);
    float ms = -1.0f;
    CHECK(aclrtEventElapsedTime(&ms, t0, t1));
    EXPECT(ms >= 0.0f);
    EXPECT_CODE(aclrtEventElapsedTime(NULL, t0, t1), ACL_ERROR_INVALID_PARAM, "ms");
    CHECK(aclrtFree(d1));
    CHECK(aclrtDestroyStream(s1));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtFree(d0));
    CHECK(aclrtFreeHost(h));
    CHECK(aclrtDestroyEvent(ev));
    CHECK(aclrtDestroyEvent(t0));
    CHECK(aclrtDestroyEvent(t1));
    CHECK(aclrtDestroyStream(s0));
    printf("cross-device event wait ok\n");
}

/* One report thread serves the default stream (NULL) and a created stream. */
static void callbacks_on_default_stream(void) {
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    std::atomic<bool> stop{false};
    std::thread rep([&stop] {
        CHECK(aclrtSetDevice(0));
        while (!stop)
            (void)aclrtProcessReport(20);
        CHECK(aclrtResetDevice(0));
    });
    uint64_t tid = (uint64_t)rep.native_handle();
    CHECK(aclrtSubscribeReport(tid, NULL));
    CHECK(aclrtSubscribeReport(tid, s));
    CHECK(aclrtLaunchCallback(add_hits, (void *)1, ACL_CALLBACK_BLOCK, NULL));
    CHECK(aclrtLaunchCallback(add_hits, (void *)10, ACL_CALLBACK_NO_BLOCK, s));
    EXPECT_CODE(aclrtLaunchCallback(add_hits, (void *)100, (aclrtCallbackBlockType)5, s),
                ACL_ERROR_INVALID_PARAM, "blockType");
    CHECK(aclrtSynchronizeStream(NULL));
    CHECK(aclrtSynchronizeStream(s));
    for (int i = 0; i < 200 && g_hits != 11; i++)
        usleep(10000);
    EXPECT(g_hits == 11);
    CHECK(aclrtUnSubscribeReport(tid, NULL));
    CHECK(aclrtUnSubscribeReport(tid, s));
    stop = true;
    rep.join();
    CHECK(aclrtDestroyStream(s));
    printf("callbacks on the default stream ok\n");
}

/* aclrtMemcpy2d: rows of `width` bytes, `spitch`/`dpitch` apart; the padding is untouched. */
static void memcpy_2d(void) {
    enum { W = 16, H = 4, SP = 32, DP = 24 };
    unsigned char src[SP * H], back[DP * H], out[W * H];
    for (unsigned i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)i;
    void *d = NULL;
    CHECK(aclrtMalloc(&d, DP * H, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(d, DP * H, 0xAA, DP * H));
    CHECK(aclrtMemcpy2d(d, DP, src, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(back, sizeof back, d, DP * H, ACL_MEMCPY_DEVICE_TO_HOST));
    for (unsigned y = 0; y < H; y++)
        for (unsigned x = 0; x < DP; x++)
            EXPECT(back[y * DP + x] == (x < W ? src[y * SP + x] : 0xAA));
    CHECK(aclrtMemcpy2d(out, W, d, DP, W, H, ACL_MEMCPY_DEVICE_TO_HOST));
    for (unsigned y = 0; y < H; y++)
        for (unsigned x = 0; x < W; x++)
            EXPECT(out[y * W + x] == src[y * SP + x]);
    EXPECT_CODE(aclrtMemcpy2d(d, 8, src, SP, W, H, ACL_MEMCPY_HOST_TO_DEVICE),
                ACL_ERROR_INVALID_PARAM, "dpitch");
    CHECK(aclrtFree(d));
    printf("aclrtMemcpy2d ok\n");
}

int main(void) {
    process_level_messages();
    contexts_across_threads();
    mem_info();
    cross_device_wait();
    callbacks_on_default_stream();
    memcpy_2d();
    CHECK(aclFinalize());
    printf("rt_stranger passed\n");
    return 0;
}
