/* Callbacks and error handling of the runtime (issue 12, group 6), written from CANN's API
 * reference (runtime/docs/api_docs):
 * - aclInitCallbackRegister: called at aclInit with the config content, or at once when
 *   registered after aclInit; aclFinalizeCallbackRegister: called at aclFinalize;
 *   one callback per type except ACL_REG_TYPE_OTHER; NULL is an error;
 * - aclrtRegDeviceStateCallback / aclrtRegStreamStateCallback: SET/RESET around the device
 *   opening and closing, CREATE_POST / DESTROY_PRE around streams; a name registers once,
 *   NULL unregisters;
 * - aclrtSetDeviceTaskAbortCallback + aclrtDeviceTaskAbort: PRE and POST around the abort,
 *   pending tasks are dropped and the streams are usable again;
 * - aclrtStreamStop: only device-use-only streams;
 * - aclrtSubscribeHostFunc / aclrtProcessHostFunc / aclrtUnSubscribeHostFunc;
 * - aclrtGetThreadLastTaskId. */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>
#include "common.h"

static int init_calls, init_len, other_init_calls, fini_calls;
static char init_seen[256];

static aclError on_init(const char *cfg, size_t len, void *ud) {
    init_calls++;
    init_len = (int)len;
    snprintf(init_seen, sizeof init_seen, "%.*s", (int)len, cfg ? cfg : "");
    EXPECT(ud == (void *)0x1234);
    return ACL_SUCCESS;
}
static aclError on_other_init(const char *cfg, size_t len, void *ud) {
    (void)cfg; (void)len; (void)ud;
    other_init_calls++;
    return ACL_SUCCESS;
}
static aclError failing_init(const char *cfg, size_t len, void *ud) {
    (void)cfg; (void)len; (void)ud;
    return 123456;
}
static aclError on_fini(void *ud) {
    EXPECT(ud == (void *)0x5678);
    fini_calls++;
    return ACL_SUCCESS;
}

/* Device and stream state. */
static int dev_log[16], dev_n;
static void on_device(int32_t dev, aclrtDeviceState state, void *args) {
    EXPECT(args == (void *)0x77);
    if (dev_n < 16) dev_log[dev_n++] = dev * 10 + (int)state;
}
static aclrtStream created[8], destroyed[8];
static int created_n, destroyed_n;
static void on_stream(aclrtStream s, aclrtStreamState state, void *args) {
    (void)args;
    if (state == ACL_RT_STREAM_STATE_CREATE_POST && created_n < 8) created[created_n++] = s;
    if (state == ACL_RT_STREAM_STATE_DESTROY_PRE && destroyed_n < 8) destroyed[destroyed_n++] = s;
}

static int abort_stages[4], abort_n;
static int32_t on_abort(int32_t dev, aclrtDeviceTaskAbortStage stage, uint32_t timeout, void *args) {
    (void)timeout; (void)args;
    EXPECT(dev == 0);
    if (abort_n < 4) abort_stages[abort_n++] = (int)stage;
    return 0;
}

static volatile int slow_done;
static void slow_host_func(void *arg) {
    (void)arg;
    usleep(200 * 1000);
    slow_done++;
}

/* Host functions run by a subscribed thread. */
static pthread_t main_thread;
static volatile int hf_ran, hf_on_worker;
static void host_func(void *arg) {
    hf_ran += *(int *)arg;
    hf_on_worker = pthread_equal(pthread_self(), main_thread) ? 0 : 1;
}
struct hf_ctx {
    volatile int stop;
    aclrtContext ctx;
};
static void *hf_thread(void *p) {
    struct hf_ctx *c = (struct hf_ctx *)p;
    CHECK(aclrtSetCurrentContext(c->ctx));
    while (!c->stop) {
        aclError e = aclrtProcessHostFunc(50);
        EXPECT(e == ACL_SUCCESS || e == ACL_ERROR_RT_REPORT_TIMEOUT);
    }
    return NULL;
}

int main(void) {
    main_thread = pthread_self();
    /* Init/finalize callbacks, registered before aclInit. */
    EXPECT_CODE(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, NULL, NULL), ACL_ERROR_INVALID_PARAM, NULL);
    CHECK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_init, (void *)0x1234));
    EXPECT_CODE(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, on_other_init, NULL),
                ACL_ERROR_INTERNAL_ERROR, "already registered");
    CHECK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_other_init, NULL));
    CHECK(aclInitCallbackRegister(ACL_REG_TYPE_OTHER, on_other_init, NULL));
    CHECK(aclFinalizeCallbackRegister(ACL_REG_TYPE_OTHER, on_fini, (void *)0x5678));
    const char *cfg_path = "callbacks_acl.json";
    FILE *f = fopen(cfg_path, "w");
    EXPECT(f != NULL);
    fputs("{\"err_msg_mode\":\"0\"}", f);
    fclose(f);
    CHECK(aclInit(cfg_path));
    EXPECT(init_calls == 1);
    EXPECT(strcmp(init_seen, "{\"err_msg_mode\":\"0\"}") == 0);
    EXPECT(init_len == (int)strlen("{\"err_msg_mode\":\"0\"}"));
    EXPECT(other_init_calls == 2);
    /* Registered after aclInit: called at once. */
    CHECK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_DVPP, on_other_init, NULL));
    EXPECT(other_init_calls == 3);
    CHECK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_other_init));
    EXPECT_CODE(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_DVPP, on_other_init), ACL_ERROR_INTERNAL_ERROR, "not registered");

    /* Device and stream state callbacks. */
    EXPECT_CODE(aclrtRegDeviceStateCallback(NULL, on_device, NULL), ACL_ERROR_INVALID_PARAM, "regName");
    CHECK(aclrtRegDeviceStateCallback("test-dev", on_device, (void *)0x77));
    EXPECT_CODE(aclrtRegDeviceStateCallback("test-dev", on_device, (void *)0x77), ACL_ERROR_RT_PARAM_INVALID,
                "already been registered");
    CHECK(aclrtRegStreamStateCallback("test-stream", on_stream, NULL));
    CHECK(aclrtSetDevice(1));
    CHECK(aclrtSetDevice(1)); /* second reference: no new callbacks */
    EXPECT(dev_n == 2 && dev_log[0] == 10 + ACL_RT_DEVICE_STATE_SET_PRE &&
           dev_log[1] == 10 + ACL_RT_DEVICE_STATE_SET_POST);
    EXPECT(created_n == 1); /* the device's default stream */
    aclrtStream s1 = NULL;
    CHECK(aclrtCreateStream(&s1));
    EXPECT(created_n == 2 && created[1] == s1);
    CHECK(aclrtDestroyStream(s1));
    EXPECT(destroyed_n == 1 && destroyed[0] == s1);
    CHECK(aclrtResetDevice(1));
    EXPECT(dev_n == 2);
    CHECK(aclrtResetDevice(1));
    EXPECT(dev_n == 4 && dev_log[2] == 10 + ACL_RT_DEVICE_STATE_RESET_PRE &&
           dev_log[3] == 10 + ACL_RT_DEVICE_STATE_RESET_POST);
    EXPECT(destroyed_n == 2); /* the default stream went with the device */
    CHECK(aclrtRegDeviceStateCallback("test-dev", NULL, NULL));
    CHECK(aclrtRegStreamStateCallback("test-stream", NULL, NULL));
    CHECK(aclrtSetDevice(1));
    CHECK(aclrtResetDevice(1));
    EXPECT(dev_n == 4);

    /* Task abort: the callback sees PRE then POST; queued work is dropped. */
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtSetDeviceTaskAbortCallback("test-abort", on_abort, NULL));
    EXPECT_CODE(aclrtSetDeviceTaskAbortCallback("test-abort", on_abort, NULL), ACL_ERROR_RT_PARAM_INVALID, NULL);
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    for (int i = 0; i < 5; i++) CHECK(aclrtLaunchHostFunc(s, slow_host_func, NULL));
    usleep(50 * 1000);
    CHECK(aclrtDeviceTaskAbort(0, 10000));
    EXPECT(abort_n == 2 && abort_stages[0] == ACL_RT_DEVICE_TASK_ABORT_PRE &&
           abort_stages[1] == ACL_RT_DEVICE_TASK_ABORT_POST);
    EXPECT(slow_done <= 1);
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(slow_done <= 1);
    int one = 1;
    CHECK(aclrtLaunchHostFunc(s, host_func, &one)); /* usable again */
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(hf_ran == 1);
    EXPECT_CODE(aclrtDeviceTaskAbort(0, 36 * 60 * 1000 + 1), ACL_ERROR_RT_PARAM_INVALID, "timeout");
    EXPECT_CODE(aclrtDeviceTaskAbort(99, 0), ACL_ERROR_RT_INVALID_DEVICEID, NULL);
    CHECK(aclrtSetDeviceTaskAbortCallback("test-abort", NULL, NULL));

    /* aclrtStreamStop: only for ACL_STREAM_DEVICE_USE_ONLY streams. */
    EXPECT_CODE(aclrtStreamStop(s), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "ACL_STREAM_DEVICE_USE_ONLY");
    aclrtStream mc2 = NULL;
    CHECK(aclrtCreateStreamWithConfig(&mc2, 0, ACL_STREAM_DEVICE_USE_ONLY));
    CHECK(aclrtStreamStop(mc2));
    CHECK(aclrtDestroyStream(mc2));

    /* Host functions through a subscribed thread. */
    struct hf_ctx c = {0, NULL};
    CHECK(aclrtGetCurrentContext(&c.ctx));
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, hf_thread, &c) == 0);
    CHECK(aclrtSubscribeHostFunc((uint64_t)th, s));
    EXPECT_CODE(aclrtSubscribeHostFunc((uint64_t)th, s), ACL_ERROR_RT_STREAM_SUBSCRIBE, NULL);
    int two = 2;
    hf_ran = 0;
    CHECK(aclrtLaunchHostFunc(s, host_func, &two));
    CHECK(aclrtLaunchHostFunc(s, host_func, &two));
    CHECK(aclrtSynchronizeStream(s));
    EXPECT(hf_ran == 4 && hf_on_worker == 1);
    CHECK(aclrtUnSubscribeHostFunc((uint64_t)th, s));
    EXPECT_CODE(aclrtUnSubscribeHostFunc((uint64_t)th, s), ACL_ERROR_RT_STREAM_SUBSCRIBE, NULL);
    c.stop = 1;
    pthread_join(th, NULL);
    EXPECT_CODE(aclrtProcessHostFunc(0), ACL_ERROR_INVALID_PARAM, "timeout");
    EXPECT_CODE(aclrtProcessHostFunc(10), ACL_ERROR_RT_THREAD_SUBSCRIBE, NULL);

    /* The last task of this thread. */
    uint32_t tid1 = 0, tid2 = 0;
    CHECK(aclrtLaunchHostFunc(s, host_func, &one));
    CHECK(aclrtGetThreadLastTaskId(&tid1));
    CHECK(aclrtLaunchHostFunc(s, host_func, &one));
    CHECK(aclrtGetThreadLastTaskId(&tid2));
    EXPECT(tid2 == tid1 + 1);
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtDestroyStream(s));

    /* Error verbose: CANN's runtime offers it on the Ascend 910_96/950 families only. */
    aclrtErrorInfo info;
    memset(&info, 0, sizeof info);
    EXPECT_CODE(aclrtGetErrorVerbose(0, &info), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "Ascend910B");
    /* No uncorrectable memory errors on this machine. */
    aclrtMemUceInfo uce[ACL_RT_MEM_UCE_INFO_MAX_NUM];
    size_t n = 99;
    CHECK(aclrtGetMemUceInfo(0, uce, ACL_RT_MEM_UCE_INFO_MAX_NUM, &n));
    EXPECT(n == 0);
    EXPECT_CODE(aclrtGetMemUceInfo(1, uce, ACL_RT_MEM_UCE_INFO_MAX_NUM, &n), ACL_ERROR_RT_CONTEXT_NULL, NULL);

    CHECK(aclrtResetDevice(0));
    /* Finalize callback runs once, at aclFinalize. */
    EXPECT(fini_calls == 0);
    CHECK(aclFinalize());
    EXPECT(fini_calls == 1);
    CHECK(aclFinalizeCallbackUnRegister(ACL_REG_TYPE_OTHER, on_fini));
    CHECK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, on_init));

    /* A failing init callback fails aclInit with its code, and leaves ACL uninitialized. */
    CHECK(aclInitCallbackRegister(ACL_REG_TYPE_ACL_MODEL, failing_init, NULL));
    EXPECT_CODE(aclInit(cfg_path), 123456, "init callback");
    aclrtStream none = NULL;
    EXPECT_CODE(aclrtCreateStream(&none), ACL_ERROR_UNINITIALIZE, NULL);
    CHECK(aclInitCallbackUnRegister(ACL_REG_TYPE_ACL_MODEL, failing_init));
    CHECK(aclInit(cfg_path));
    CHECK(aclFinalize());
    remove(cfg_path);
    printf("rest_callbacks passed\n");
    return 0;
}
