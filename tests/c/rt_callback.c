/* Host callbacks: aclrtSubscribeReport + aclrtLaunchCallback (blocking and non-blocking)
 * processed by a report thread with aclrtProcessReport, aclrtLaunchHostFunc, and the
 * error codes of each misuse. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <unistd.h>
#include "common.h"

#define LOG_MAX 256
static int g_log[LOG_MAX];
static int g_len;
static int g_stop;
static pthread_t g_cb_thread; /* thread that ran the last callback */

static void append(void *arg) {
    int i = __atomic_fetch_add(&g_len, 1, __ATOMIC_SEQ_CST);
    g_log[i] = (int)(intptr_t)arg;
}
static void cb_append(void *arg) {
    g_cb_thread = pthread_self();
    append(arg);
}
static int log_len(void) { return __atomic_load_n(&g_len, __ATOMIC_SEQ_CST); }
static int pos(int v) {
    for (int i = 0; i < log_len(); i++)
        if (g_log[i] == v) return i;
    return -1;
}

static aclrtContext g_ctx;

static void *report_main(void *arg) {
    (void)arg;
    if (aclrtSetCurrentContext(g_ctx) != ACL_SUCCESS) return (void *)1;
    while (!__atomic_load_n(&g_stop, __ATOMIC_SEQ_CST)) {
        aclError e = aclrtProcessReport(20);
        /* Before main subscribes this thread: ACL_ERROR_RT_THREAD_SUBSCRIBE; idle: timeout. */
        if (e != ACL_SUCCESS && e != 507012 /* ACL_ERROR_RT_REPORT_TIMEOUT */ &&
            e != ACL_ERROR_RT_THREAD_SUBSCRIBE)
            return (void *)2;
    }
    return NULL;
}

static aclError g_idle_code;
static int g_subscribed;
static void *idle_main(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&g_subscribed, __ATOMIC_SEQ_CST)) usleep(100);
    g_idle_code = aclrtProcessReport(10); /* subscribed, nothing queued */
    return NULL;
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtGetCurrentContext(&g_ctx));
    aclrtStream s, other, idle;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateStream(&other));
    CHECK(aclrtCreateStream(&idle));

    EXPECT_CODE(aclrtLaunchCallback(cb_append, NULL, ACL_CALLBACK_BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG,
                "aclrtSubscribeReport");
    EXPECT_CODE(aclrtProcessReport(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, "not subscribed");
    EXPECT_CODE(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM, "timeout = 0");
    EXPECT_CODE(aclrtProcessReport(-3), ACL_ERROR_INVALID_PARAM, "timeout = -3");

    pthread_t rep, idl;
    EXPECT(pthread_create(&rep, NULL, report_main, NULL) == 0);
    CHECK(aclrtSubscribeReport((uint64_t)rep, s));
    EXPECT_CODE(aclrtSubscribeReport((uint64_t)rep, s), ACL_ERROR_RT_STREAM_SUBSCRIBE, "already subscribed");
    EXPECT_CODE(aclrtLaunchCallback(cb_append, NULL, (aclrtCallbackBlockType)5, s), ACL_ERROR_INVALID_PARAM,
                "blockType");
    EXPECT_CODE(aclrtLaunchCallback(NULL, NULL, ACL_CALLBACK_BLOCK, s), ACL_ERROR_INVALID_PARAM, "fn");

    /* Subscribed but idle: aclrtProcessReport times out with ACL_ERROR_RT_REPORT_TIMEOUT. */
    EXPECT(pthread_create(&idl, NULL, idle_main, NULL) == 0);
    CHECK(aclrtSubscribeReport((uint64_t)idl, idle));
    __atomic_store_n(&g_subscribed, 1, __ATOMIC_SEQ_CST);
    pthread_join(idl, NULL);
    EXPECT(g_idle_code == 507012);
    CHECK(aclrtUnSubscribeReport((uint64_t)idl, idle));

    for (int round = 0; round < 20; round++) {
        __atomic_store_n(&g_len, 0, __ATOMIC_SEQ_CST);
        CHECK(aclrtLaunchHostFunc(s, append, (void *)1));
        CHECK(aclrtLaunchCallback(cb_append, (void *)2, ACL_CALLBACK_BLOCK, s));
        CHECK(aclrtLaunchHostFunc(s, append, (void *)3));
        CHECK(aclrtLaunchCallback(cb_append, (void *)4, ACL_CALLBACK_NO_BLOCK, s));
        CHECK(aclrtLaunchHostFunc(s, append, (void *)5));
        CHECK(aclrtSynchronizeStream(s));
        /* The blocking callback ran before the stream went on; the non-blocking one is
         * processed by the report thread, possibly after the stream finished. */
        EXPECT(pos(1) == 0 && pos(2) == 1 && pos(3) == 2);
        for (int i = 0; i < 100000 && pos(4) < 0; i++) usleep(100);
        EXPECT(pos(4) > pos(3) && pos(5) > pos(3));
    }
    EXPECT(pthread_equal(g_cb_thread, rep));

    EXPECT_CODE(aclrtUnSubscribeReport((uint64_t)rep + 1, s), ACL_ERROR_RT_STREAM_SUBSCRIBE, "not by threadId");
    EXPECT_CODE(aclrtUnSubscribeReport((uint64_t)rep, other), ACL_ERROR_RT_STREAM_SUBSCRIBE, "not subscribed");
    CHECK(aclrtUnSubscribeReport((uint64_t)rep, s));
    EXPECT_CODE(aclrtLaunchCallback(cb_append, NULL, ACL_CALLBACK_NO_BLOCK, s), ACL_ERROR_RT_STREAM_NO_CB_REG, NULL);
    __atomic_store_n(&g_stop, 1, __ATOMIC_SEQ_CST);
    void *ret = (void *)99;
    pthread_join(rep, &ret);
    EXPECT(ret == NULL);

    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtDestroyStream(other));
    CHECK(aclrtDestroyStream(idle));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rt_callback passed\n");
    return 0;
}
