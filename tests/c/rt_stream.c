/* Streams and events: ordering of async work on several streams with events between them
 * (host functions append to a host log), queries, timeouts, failure modes, destroy (and
 * force), elapsed time, timestamps, every event query variant, and bad handles. No check
 * depends on timing: blocked work is held by a gate that only this program opens. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include "common.h"

#define LOG_MAX 4096
static int g_log[LOG_MAX];
static int g_len;

static void append(void *arg) {
    int i = __atomic_fetch_add(&g_len, 1, __ATOMIC_SEQ_CST);
    g_log[i] = (int)(intptr_t)arg;
}

static int log_len(void) { return __atomic_load_n(&g_len, __ATOMIC_SEQ_CST); }

static int pos(int v) {
    for (int i = 0; i < log_len(); i++)
        if (g_log[i] == v) return i;
    return -1;
}

static void reset_log(void) { __atomic_store_n(&g_len, 0, __ATOMIC_SEQ_CST); }

/* A gate: a host function that blocks its stream until opened. */
static int g_gate;
static void gate_wait(void *arg) {
    (void)arg;
    while (!__atomic_load_n(&g_gate, __ATOMIC_SEQ_CST)) usleep(200);
}
static void gate_set(int v) { __atomic_store_n(&g_gate, v, __ATOMIC_SEQ_CST); }

static void sleep_ms(void *arg) { usleep((useconds_t)(intptr_t)arg * 1000); }

static void *open_gate_later(void *arg) {
    usleep((useconds_t)(intptr_t)arg * 1000);
    gate_set(1);
    return NULL;
}

#define PUSH(s, v) CHECK(aclrtLaunchHostFunc((s), append, (void *)(intptr_t)(v)))

static void ordering(void) {
    aclrtStream s1, s2, s3;
    aclrtEvent ea, eb;
    CHECK(aclrtCreateStream(&s1));
    CHECK(aclrtCreateStream(&s2));
    CHECK(aclrtCreateStream(&s3));
    CHECK(aclrtCreateEvent(&ea));
    CHECK(aclrtCreateEvent(&eb));
    reset_log();
    gate_set(0);
    CHECK(aclrtLaunchHostFunc(s1, gate_wait, NULL));
    PUSH(s1, 1);
    CHECK(aclrtRecordEvent(ea, s1));
    CHECK(aclrtStreamWaitEvent(s2, ea));
    PUSH(s2, 2);
    CHECK(aclrtRecordEvent(eb, s2));
    CHECK(aclrtStreamWaitEvent(s3, eb));
    PUSH(s3, 3);

    /* Everything is held by the gate on s1. */
    aclrtStreamStatus ss = ACL_STREAM_STATUS_COMPLETE;
    CHECK(aclrtStreamQuery(s3, &ss));
    EXPECT(ss == ACL_STREAM_STATUS_NOT_READY);
    EXPECT_CODE(aclrtSynchronizeStreamWithTimeout(s3, 0), ACL_ERROR_RT_PARAM_INVALID, "timeout = 0");
    EXPECT_CODE(aclrtSynchronizeEventWithTimeout(ea, 0), ACL_ERROR_RT_PARAM_INVALID, "timeout = 0");
    EXPECT_CODE(aclrtSynchronizeDeviceWithTimeout(0), ACL_ERROR_RT_PARAM_INVALID, "timeout = 0");
    EXPECT_CODE(aclrtSynchronizeStreamWithTimeout(s3, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, "20 ms");
    EXPECT_CODE(aclrtSynchronizeEventWithTimeout(ea, 10), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "10 ms");
    EXPECT_CODE(aclrtSynchronizeEventWithTimeout(ea, -5), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    CHECK(aclrtQueryEventStatus(ea, &rs));
    EXPECT(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    float ms = 0;
    EXPECT_CODE(aclrtEventElapsedTime(&ms, ea, eb), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "not completed");
    EXPECT(log_len() == 0);

    gate_set(1);
    CHECK(aclrtSynchronizeStream(s3));
    EXPECT(log_len() == 3 && g_log[0] == 1 && g_log[1] == 2 && g_log[2] == 3);
    CHECK(aclrtStreamQuery(s3, &ss));
    EXPECT(ss == ACL_STREAM_STATUS_COMPLETE);
    CHECK(aclrtSynchronizeEvent(eb));

    /* A long queue runs in order; a second stream waits on an event recorded mid-way. */
    reset_log();
    gate_set(0);
    CHECK(aclrtLaunchHostFunc(s1, gate_wait, NULL));
    for (int i = 0; i < 1000; i++) {
        PUSH(s1, 100 + i);
        if (i == 499) CHECK(aclrtRecordEvent(ea, s1));
    }
    CHECK(aclrtStreamWaitEvent(s2, ea));
    PUSH(s2, 5000);
    gate_set(1);
    CHECK(aclrtSynchronizeStream(s1));
    CHECK(aclrtSynchronizeStream(s2));
    EXPECT(log_len() == 1001);
    int k = 0;
    for (int i = 0; i < 1001; i++)
        if (g_log[i] != 5000) EXPECT(g_log[i] == 100 + k++);
    EXPECT(pos(5000) > pos(599));

    /* Waiting on an event never recorded imposes no wait. */
    aclrtEvent never;
    CHECK(aclrtCreateEvent(&never));
    CHECK(aclrtStreamWaitEvent(s3, never));
    CHECK(aclrtSynchronizeStreamWithTimeout(s3, 1000));
    CHECK(aclrtSynchronizeEvent(never));

    CHECK(aclrtDestroyEvent(never));
    CHECK(aclrtDestroyEvent(ea));
    CHECK(aclrtDestroyEvent(eb));
    CHECK(aclrtDestroyStream(s1));
    CHECK(aclrtDestroyStream(s2));
    CHECK(aclrtDestroyStream(s3));
    printf("ordering ok\n");
}

static void timing(void) {
    aclrtStream s;
    aclrtEvent e0, e1, e2, e3;
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateEvent(&e0));
    CHECK(aclrtCreateEventWithFlag(&e1, ACL_EVENT_TIME_LINE));
    CHECK(aclrtCreateEventExWithFlag(&e2, ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE));
    CHECK(aclrtCreateEvent(&e3));
    float ms = -1;
    EXPECT_CODE(aclrtEventElapsedTime(&ms, e0, e1), ACL_ERROR_RT_INTERNAL_ERROR, "never recorded");

    /* Query variants before any record (their numbering differs, abi.md 1.4). */
    aclrtEventStatus qs = ACL_EVENT_STATUS_NOT_READY;
    aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    aclrtEventWaitStatus ws = ACL_EVENT_WAIT_STATUS_COMPLETE;
    CHECK(aclrtQueryEvent(e0, &qs));
    EXPECT(qs == ACL_EVENT_STATUS_COMPLETE);
    CHECK(aclrtQueryEventStatus(e0, &rs));
    EXPECT(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    CHECK(aclrtQueryEventWaitStatus(e0, &ws));
    EXPECT(ws == ACL_EVENT_WAIT_STATUS_NOT_READY);

    CHECK(aclrtRecordEvent(e0, s));
    CHECK(aclrtLaunchHostFunc(s, sleep_ms, (void *)(intptr_t)2));
    CHECK(aclrtRecordEvent(e1, s));
    CHECK(aclrtLaunchHostFunc(s, sleep_ms, (void *)(intptr_t)20));
    CHECK(aclrtRecordEvent(e2, s));
    CHECK(aclrtSynchronizeStream(s));
    float a = 0, b = 0;
    CHECK(aclrtEventElapsedTime(&a, e0, e1));
    CHECK(aclrtEventElapsedTime(&b, e0, e2));
    printf("elapsed e0->e1 %.3f ms, e0->e2 %.3f ms\n", a, b);
    EXPECT(a >= 2.0f);
    EXPECT(b >= a + 20.0f);
    EXPECT_CODE(aclrtEventElapsedTime(&ms, e2, e0), 107007 /* ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL */, "before");
    EXPECT_CODE(aclrtEventElapsedTime(NULL, e0, e1), ACL_ERROR_INVALID_PARAM, "ms");
    EXPECT_CODE(aclrtEventElapsedTime(&ms, e0, e3), ACL_ERROR_RT_INTERNAL_ERROR, "endEvent");
    uint64_t t0 = 0, t1 = 0;
    CHECK(aclrtEventGetTimestamp(e0, &t0));
    CHECK(aclrtEventGetTimestamp(e1, &t1));
    EXPECT(t1 >= t0 + 2000); /* microseconds */

    CHECK(aclrtQueryEvent(e1, &qs));
    EXPECT(qs == ACL_EVENT_STATUS_COMPLETE);
    CHECK(aclrtQueryEventStatus(e1, &rs));
    EXPECT(rs == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    CHECK(aclrtQueryEventWaitStatus(e1, &ws));
    EXPECT(ws == ACL_EVENT_WAIT_STATUS_COMPLETE);
    CHECK(aclrtResetEvent(e1, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtQueryEventStatus(e1, &rs));
    EXPECT(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_CODE(aclrtEventGetTimestamp(e1, &t1), ACL_ERROR_RT_INTERNAL_ERROR, "reset");

    EXPECT_CODE(aclrtCreateEventWithFlag(&e3, 0x100), ACL_ERROR_RT_PARAM_INVALID, "0x100");
    EXPECT_CODE(aclrtCreateEventWithFlag(&e3, 0), ACL_ERROR_RT_PARAM_INVALID, "flag = 0x0");
    /* Without ACL_EVENT_TIME_LINE an event records no timestamp. */
    aclrtEvent es;
    CHECK(aclrtCreateEventWithFlag(&es, ACL_EVENT_SYNC));
    CHECK(aclrtRecordEvent(es, s));
    CHECK(aclrtSynchronizeEvent(es));
    EXPECT_CODE(aclrtEventElapsedTime(&ms, e0, es), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "ACL_EVENT_TIME_LINE");
    EXPECT_CODE(aclrtEventGetTimestamp(es, &t0), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, "ACL_EVENT_TIME_LINE");
    CHECK(aclrtDestroyEvent(es));
    CHECK(aclrtDestroyEvent(e0));
    CHECK(aclrtDestroyEvent(e1));
    CHECK(aclrtDestroyEvent(e2));
    CHECK(aclrtDestroyEvent(e3));
    CHECK(aclrtDestroyStream(s));
    printf("timing ok\n");
}

/* aclrtSetExceptionInfoCallback records here. */
static struct { uint32_t task, stream, device, code, tid; } g_exc[16];
static int g_nexc;
static void on_exception(aclrtExceptionInfo *info) {
    int i = __atomic_fetch_add(&g_nexc, 1, __ATOMIC_SEQ_CST);
    if (i >= 16) return;
    g_exc[i].task = aclrtGetTaskIdFromExceptionInfo(info);
    g_exc[i].stream = aclrtGetStreamIdFromExceptionInfo(info);
    g_exc[i].device = aclrtGetDeviceIdFromExceptionInfo(info);
    g_exc[i].code = aclrtGetErrorCodeFromExceptionInfo(info);
    g_exc[i].tid = aclrtGetThreadIdFromExceptionInfo(info);
}

static void failure_modes(void) {
    aclrtStream held, stop, cont;
    aclrtEvent ev;
    CHECK(aclrtCreateStream(&held));
    CHECK(aclrtCreateStream(&stop));
    CHECK(aclrtCreateStream(&cont));
    CHECK(aclrtCreateEvent(&ev));
    CHECK(aclrtSetStreamFailureMode(stop, ACL_STOP_ON_FAILURE));
    CHECK(aclrtSetExceptionInfoCallback(on_exception));
    /* CANN 8.5 StreamSetMode: only bit 0 counts; the same mode again succeeds; stop cannot
     * go back to continue; the default stream is not supported. */
    CHECK(aclrtSetStreamFailureMode(stop, 3));
    EXPECT_CODE(aclrtSetStreamFailureMode(stop, 2), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "ACL_CONTINUE_ON_FAILURE");
    EXPECT_CODE(aclrtSetStreamFailureMode(stop, ACL_CONTINUE_ON_FAILURE), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "cannot");
    EXPECT_CODE(aclrtSetStreamFailureMode(NULL, ACL_STOP_ON_FAILURE), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "default stream");
    reset_log();
    gate_set(0);
    CHECK(aclrtLaunchHostFunc(held, gate_wait, NULL));
    CHECK(aclrtRecordEvent(ev, held));
    /* Both streams wait 10 ms for an event the gate holds back: the wait fails. */
    EXPECT_CODE(aclrtStreamWaitEventWithTimeout(stop, ev, -1), ACL_ERROR_RT_PARAM_INVALID, "timeout = -1");
    CHECK(aclrtStreamWaitEventWithTimeout(stop, ev, 10));
    PUSH(stop, 99);
    CHECK(aclrtStreamWaitEventWithTimeout(cont, ev, 10));
    PUSH(cont, 98);
    EXPECT_CODE(aclrtSynchronizeStream(stop), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "timed out");
    EXPECT_CODE(aclrtSynchronizeStream(cont), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "timed out");
    EXPECT(pos(99) == -1); /* discarded after the failure (ACL_STOP_ON_FAILURE) */
    EXPECT(pos(98) >= 0);  /* still ran (ACL_CONTINUE_ON_FAILURE) */
    /* The exception callback saw both failures: task 1 of each stream, on device 0. */
    int32_t stop_id = -1;
    CHECK(aclrtStreamGetId(stop, &stop_id));
    EXPECT(__atomic_load_n(&g_nexc, __ATOMIC_SEQ_CST) == 2);
    int found = 0;
    for (int i = 0; i < 2; i++) {
        EXPECT(g_exc[i].task == 1 && g_exc[i].device == 0 && g_exc[i].code == ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
        EXPECT(g_exc[i].tid != 0);
        if (g_exc[i].stream == (uint32_t)stop_id) found = 1;
    }
    EXPECT(found);
    EXPECT(aclrtGetTaskIdFromExceptionInfo(NULL) == UINT32_MAX);
    CHECK(aclrtSetExceptionInfoCallback(NULL));
    /* The error was reported once; the stream works again. */
    CHECK(aclrtSynchronizeStream(stop));
    PUSH(stop, 100);
    CHECK(aclrtSynchronizeStream(stop));
    EXPECT(pos(100) >= 0);
    /* aclrtSetOpWaitTimeout (seconds) bounds plain aclrtStreamWaitEvent waits. */
    CHECK(aclrtSetOpWaitTimeout(1));
    CHECK(aclrtStreamWaitEvent(cont, ev));
    PUSH(cont, 97);
    EXPECT_CODE(aclrtSynchronizeStream(cont), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, "1000 ms");
    EXPECT(pos(97) >= 0);
    CHECK(aclrtSetOpWaitTimeout(0));
    CHECK(aclrtStreamWaitEvent(cont, ev)); /* unbounded again: released by the gate */
    PUSH(cont, 96);
    gate_set(1);
    CHECK(aclrtSynchronizeStream(held));
    CHECK(aclrtSynchronizeStream(cont));
    EXPECT(pos(96) > pos(97));
    EXPECT(__atomic_load_n(&g_nexc, __ATOMIC_SEQ_CST) == 2); /* callback removed */
    CHECK(aclrtDestroyEvent(ev));
    CHECK(aclrtDestroyStream(held));
    CHECK(aclrtDestroyStream(stop));
    CHECK(aclrtDestroyStream(cont));
    printf("failure modes ok\n");
}

static void destroy(void) {
    aclrtStream s;
    pthread_t t;
    /* Destroy waits for pending tasks. */
    reset_log();
    gate_set(0);
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtLaunchHostFunc(s, gate_wait, NULL));
    PUSH(s, 7);
    EXPECT(pthread_create(&t, NULL, open_gate_later, (void *)(intptr_t)20) == 0);
    CHECK(aclrtDestroyStream(s));
    EXPECT(pos(7) == 0);
    pthread_join(t, NULL);
    EXPECT_CODE(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM, "destroyed");
    /* Destroy force discards them. */
    reset_log();
    gate_set(0);
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtLaunchHostFunc(s, gate_wait, NULL));
    PUSH(s, 8);
    EXPECT(pthread_create(&t, NULL, open_gate_later, (void *)(intptr_t)20) == 0);
    CHECK(aclrtDestroyStreamForce(s));
    pthread_join(t, NULL);
    EXPECT(pos(8) == -1);
    /* Abort discards what has not started; the stream stays usable. */
    reset_log();
    gate_set(0);
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtLaunchHostFunc(s, gate_wait, NULL));
    PUSH(s, 9);
    CHECK(aclrtStreamAbort(s));
    gate_set(1);
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(pos(9) == -1);
    PUSH(s, 10);
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(pos(10) == 0);
    CHECK(aclrtDestroyStream(s));
    printf("destroy ok\n");
}

static void config_and_bad_input(void) {
    aclrtStream s = NULL, s2 = NULL;
    aclrtEvent ev;
    uint32_t prio = 99, flags = 99;
    int32_t id = -1;
    CHECK(aclrtCreateStreamWithConfig(&s, 5, ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC));
    CHECK(aclrtStreamGetPriority(s, &prio));
    CHECK(aclrtStreamGetFlags(s, &flags));
    CHECK(aclrtStreamGetId(s, &id));
    EXPECT(prio == 5 && flags == (ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC) && id >= 0);
    /* Out-of-range priorities move to the nearest bound; unknown flag bits are ignored. */
    CHECK(aclrtCreateStreamWithConfig(&s2, 8, 0x1000 | ACL_STREAM_FAST_SYNC));
    CHECK(aclrtStreamGetPriority(s2, &prio));
    CHECK(aclrtStreamGetFlags(s2, &flags));
    EXPECT(prio == 7 && flags == ACL_STREAM_FAST_SYNC);
    CHECK(aclrtDestroyStream(s2));
    CHECK(aclrtCreateStreamWithConfig(&s2, 0xFFFFFFFFu, 0));
    CHECK(aclrtStreamGetPriority(s2, &prio));
    EXPECT(prio == 0);
    CHECK(aclrtDestroyStream(s2));
    s2 = NULL;
    EXPECT_CODE(aclrtCreateStream(NULL), ACL_ERROR_INVALID_PARAM, "stream");

    aclrtStreamConfigHandle *h = aclrtCreateStreamConfigHandle();
    EXPECT(h != NULL);
    uint32_t p3 = 3, fl = ACL_STREAM_HUGE;
    CHECK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &p3, sizeof p3));
    CHECK(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_FLAG, &fl, sizeof fl));
    uint32_t p9 = 9;
    EXPECT_CODE(aclrtSetStreamConfigOpt(h, ACL_RT_STREAM_PRIORITY, &p9, sizeof p9), ACL_ERROR_RT_PARAM_INVALID, "priority");
    EXPECT_CODE(aclrtSetStreamConfigOpt(h, (aclrtStreamConfigAttr)9, &p3, sizeof p3), ACL_ERROR_INVALID_PARAM, "attr");
    CHECK(aclrtCreateStreamV2(&s2, h));
    CHECK(aclrtStreamGetPriority(s2, &prio));
    CHECK(aclrtStreamGetFlags(s2, &flags));
    EXPECT(prio == 3 && flags == ACL_STREAM_HUGE);
    CHECK(aclrtDestroyStreamConfigHandle(h));
    EXPECT_CODE(aclrtDestroyStreamConfigHandle(h), ACL_ERROR_INVALID_PARAM, "aclrtCreateStreamConfigHandle");
    /* Stream attributes. */
    aclrtStreamAttrValue av;
    memset(&av, 0, sizeof av);
    av.failureMode = ACL_STOP_ON_FAILURE;
    CHECK(aclrtSetStreamAttribute(s2, ACL_STREAM_ATTR_FAILURE_MODE, &av));
    av.failureMode = 0;
    CHECK(aclrtGetStreamAttribute(s2, ACL_STREAM_ATTR_FAILURE_MODE, &av));
    EXPECT(av.failureMode == ACL_STOP_ON_FAILURE);
    av.userCustomTag = 1234;
    CHECK(aclrtSetStreamAttribute(s2, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &av));
    memset(&av, 0, sizeof av);
    CHECK(aclrtGetStreamAttribute(s2, ACL_STREAM_ATTR_USER_CUSTOM_TAG, &av));
    EXPECT(av.userCustomTag == 1234);
    /* The overflow switch reads 0 until set (aclrtGetStreamOverflowSwitch). */
    memset(&av, 0xff, sizeof av);
    CHECK(aclrtGetStreamAttribute(s2, ACL_STREAM_ATTR_FLOAT_OVERFLOW_CHECK, &av));
    EXPECT(av.overflowSwitch == 0);
    EXPECT_CODE(aclrtSetStreamAttribute(s2, (aclrtStreamAttr)9, &av), ACL_ERROR_INVALID_PARAM, "stmAttrType");
    CHECK(aclrtDestroyStream(s2));

    /* Destroyed, garbage and wrong-kind handles. */
    EXPECT_CODE(aclrtSynchronizeStream(s2), ACL_ERROR_INVALID_PARAM, "destroyed");
    EXPECT_CODE(aclrtDestroyStream(s2), ACL_ERROR_INVALID_PARAM, "destroyed");
    EXPECT_CODE(aclrtSynchronizeStream((aclrtStream)0x1234), ACL_ERROR_INVALID_PARAM, "not a stream handle");
    CHECK(aclrtCreateEvent(&ev));
    uint32_t evid = 0, evid2 = 0;
    aclrtEvent ev2;
    CHECK(aclrtCreateEvent(&ev2));
    CHECK(aclrtGetEventId(ev, &evid));
    CHECK(aclrtGetEventId(ev2, &evid2));
    EXPECT(evid != evid2);
    CHECK(aclrtDestroyEvent(ev2));
    EXPECT_CODE(aclrtSynchronizeStream((aclrtStream)ev), ACL_ERROR_INVALID_PARAM, "an event handle, not a stream");
    EXPECT_CODE(aclrtRecordEvent(NULL, s), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT_CODE(aclrtRecordEvent((aclrtEvent)s, s), ACL_ERROR_INVALID_PARAM, "a stream handle, not an event");
    EXPECT_CODE(aclrtStreamWaitEvent(s, NULL), ACL_ERROR_INVALID_PARAM, "event");
    EXPECT_CODE(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    EXPECT_CODE(aclrtStreamQuery(s, NULL), ACL_ERROR_INVALID_PARAM, "status");
    EXPECT_CODE(aclrtLaunchHostFunc(s, NULL, NULL), ACL_ERROR_INVALID_PARAM, "fn");
    CHECK(aclrtDestroyEvent(ev));
    EXPECT_CODE(aclrtDestroyEvent(ev), ACL_ERROR_INVALID_PARAM, "destroyed");
    EXPECT_CODE(aclrtSynchronizeEvent(ev), ACL_ERROR_INVALID_PARAM, "destroyed");
    EXPECT_CODE(aclrtDestroyStream(NULL), ACL_ERROR_INVALID_PARAM, "NULL");
    /* NULL is the default stream. */
    reset_log();
    PUSH(NULL, 1);
    CHECK(aclrtSynchronizeStream(NULL));
    EXPECT(pos(1) == 0);
    CHECK(aclrtDestroyStream(s));
    printf("config and bad input ok\n");
}

int main(void) {
    CHECK(aclInit(NULL));
    aclrtStream s;
    EXPECT_CODE(aclrtCreateStream(&s), ACL_ERROR_RT_CONTEXT_NULL, "aclrtSetDevice");
    CHECK(aclrtSetDevice(0));
    ordering();
    timing();
    failure_modes();
    destroy();
    config_and_bad_input();
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rt_stream passed\n");
    return 0;
}
