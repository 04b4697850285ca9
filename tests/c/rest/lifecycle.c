/* Startup and lifecycle behaviours of CANN's runtime (issue 12, group 1), written from the
 * API reference:
 * - aclFinalize does not reset devices: a program may release its devices (and streams,
 *   events) after aclFinalize, as CANN's multi-thread samples do;
 * - resetting a device does not take away another device's peer access to it;
 * - aclrtSetDevice works before aclInit (CANN's runtime needs no aclInit; CANN's own
 *   samples set the device, create a context and a stream, then call aclInit), and aclInit
 *   keeps what was made; other calls before either return ACL_ERROR_UNINITIALIZE;
 * - an unsupported function names itself once at the default log level (checked by the
 *   harness on stderr). */
#include <dlfcn.h>
#include "common.h"

static void fill_and_check(void *dev, aclrtStream s, int value) {
    unsigned char host[64];
    CHECK(aclrtMemsetAsync(dev, 64, value, 64, s));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtMemcpy(host, 64, dev, 64, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < 64; i++) EXPECT(host[i] == (unsigned char)value);
}

int main(int argc, char **argv) {
    int32_t can = 0;
    void *dev = NULL;
    /* Before aclInit: aclrtSetDevice, a context and a stream work; aclInit keeps them. */
    EXPECT_CODE(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE,
                "aclInit");
    aclrtContext ctx = NULL;
    aclrtStream s0 = NULL;
    CHECK(aclrtSetDevice(1));
    int32_t cur = -1;
    CHECK(aclrtGetDevice(&cur));
    EXPECT(cur == 1);
    CHECK(aclrtCreateContext(&ctx, 1));
    CHECK(aclrtSetCurrentContext(ctx));
    CHECK(aclrtCreateStream(&s0));
    CHECK(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    fill_and_check(dev, s0, 0x5a);
    CHECK(aclInit(NULL));
    fill_and_check(dev, s0, 0x3c);
    CHECK(aclrtFree(dev));
    CHECK(aclrtDestroyStream(s0));
    CHECK(aclrtDestroyContext(ctx));
    CHECK(aclrtResetDevice(1));
    CHECK(aclFinalize());
    EXPECT_CODE(aclrtCreateStream(&s0), ACL_ERROR_UNINITIALIZE, "aclInit");

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtSetDevice(1));
    /* Peer access from device 0 to device 1 survives a reset of device 1. */
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtDeviceCanAccessPeer(&can, 0, 1));
    EXPECT(can == 1);
    CHECK(aclrtDeviceEnablePeerAccess(1, 0));
    CHECK(aclrtResetDevice(1));
    int32_t st = -1;
    CHECK(aclrtDevicePeerAccessStatus(0, 1, &st));
    EXPECT(st == 1);
    CHECK(aclrtDeviceDisablePeerAccess(1));
    CHECK(aclrtDevicePeerAccessStatus(0, 1, &st));
    EXPECT(st == 0);
    EXPECT_CODE(aclrtDeviceDisablePeerAccess(1), ACL_ERROR_INVALID_PARAM, "not enabled");

    /* Resources released after aclFinalize: the device, a stream and an event. */
    aclrtStream s = NULL;
    aclrtEvent ev = NULL;
    CHECK(aclrtSetDevice(2));
    CHECK(aclrtCreateStream(&s));
    CHECK(aclrtCreateEvent(&ev));
    CHECK(aclrtRecordEvent(ev, s));
    CHECK(aclFinalize());
    CHECK(aclrtDestroyEvent(ev));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(2));
    CHECK(aclrtResetDevice(0)); /* set twice: two resets */
    CHECK(aclrtResetDevice(0));
    /* A device never set is not released by anything. */
    EXPECT_CODE(aclrtResetDevice(3), ACL_ERROR_UNINITIALIZE, "aclInit");
    /* Other calls need aclInit (or aclrtSetDevice) again; aclrtSetDevice works. */
    EXPECT_CODE(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE,
                "aclInit");
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtResetDevice(0));

    /* An unsupported function (named by the harness, a stub whose generated body takes no
     * arguments): its code, and its name in the message. */
    if (argc > 1) {
        aclError (*fn)(void) = (aclError(*)(void))dlsym(RTLD_DEFAULT, argv[1]);
        EXPECT(fn != NULL);
        CHECK(aclInit(NULL));
        CHECK(aclrtSetDevice(0));
        aclError a = fn();
        const char *m = aclGetRecentErrMsg();
        EXPECT(m != NULL && strstr(m, argv[1]) != NULL);
        aclError b = fn();
        printf("stub returned %d %d\n", (int)a, (int)b);
        EXPECT(a != ACL_SUCCESS && a == b);
        CHECK(aclrtResetDevice(0));
        CHECK(aclFinalize());
    }
    printf("rest_lifecycle passed\n");
    return 0;
}
