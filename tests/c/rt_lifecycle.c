/* aclInit / aclFinalize codes, config files, versions, SoC name, run mode, and the
 * calls that need aclInit first. Run in a scratch directory (writes config files). */
#include "common.h"

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    EXPECT(f != NULL);
    fputs(text, f);
    fclose(f);
}

int main(void) {
    uint32_t count = 0;
    uint64_t ref = 99;

    /* Before aclInit (aclrtSetDevice works before it, as in CANN: see rest/lifecycle.c). */
    void *dev = NULL;
    EXPECT_CODE(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE,
                "aclInit");
    EXPECT_CODE(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, "not initialized");
    EXPECT_CODE(aclFinalizeReference(&ref), ACL_ERROR_REPEAT_FINALIZE, NULL);
    EXPECT(ref == 0);
    CHECK(aclrtGetDeviceCount(&count)); /* works before aclInit, as in CANN */
    CHECK(aclrtSetOpWaitTimeout(1800));  /* a process setting (torch_npu's ProcessGroupHCCL) */
    CHECK(aclrtSetOpWaitTimeout(0));
    EXPECT(count == 8);
    EXPECT(strcmp(aclrtGetSocName(), "Ascend910B1") == 0);

    /* Config files: missing, malformed. */
    EXPECT_CODE(aclInit("no-such-dir/acl.json"), ACL_ERROR_INVALID_FILE, "no-such-dir/acl.json");
    write_file("bad.json", "{\"dump\": ");
    EXPECT_CODE(aclInit("bad.json"), ACL_ERROR_PARSE_FILE, "not valid JSON");
    EXPECT_CODE(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE, NULL);

    /* Init, repeat init, reference counting. */
    CHECK(aclInit(NULL));
    EXPECT_CODE(aclInit(""), ACL_ERROR_REPEAT_INITIALIZE, "already initialized");
    EXPECT_CODE(aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE, NULL);
    CHECK(aclFinalizeReference(&ref));
    EXPECT(ref == 2);
    CHECK(aclFinalizeReference(&ref));
    EXPECT(ref == 1);
    CHECK(aclrtSetDevice(0));
    CHECK(aclFinalizeReference(&ref));
    EXPECT(ref == 0);
    EXPECT_CODE(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE, NULL);
    EXPECT_CODE(aclFinalizeReference(&ref), ACL_ERROR_REPEAT_FINALIZE, NULL);

    /* An empty config file is no config (as CANN). */
    write_file("empty.json", "");
    CHECK(aclInit("empty.json"));
    CHECK(aclFinalize());
    /* Bad err_msg_mode; a defaultDevice makes threads without a device use it. */
    write_file("mode.json", "{\"err_msg_mode\": \"2\"}");
    EXPECT_CODE(aclInit("mode.json"), ACL_ERROR_INVALID_PARAM, "err_msg_mode");
    write_file("defdev.json", "{\"defaultDevice\": {\"default_device\": \"9\"}}");
    EXPECT_CODE(aclInit("defdev.json"), ACL_ERROR_RT_INVALID_DEVICEID, "default_device");
    CHECK(aclInit(NULL));
    CHECK(aclFinalize());
    EXPECT_CODE(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE, NULL);
    CHECK(aclInit(""));

    /* Versions. */
    int32_t ma = 0, mi = 0, pa = -1;
    CHECK(aclrtGetVersion(&ma, &mi, &pa));
    EXPECT(ma == 1 && mi == 16 && pa == 0);
    EXPECT_CODE(aclrtGetVersion(NULL, &mi, &pa), ACL_ERROR_INVALID_PARAM, "majorVersion");
    aclCANNPackageVersion v;
    memset(&v, 0x55, sizeof v);
    CHECK(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, &v));
    EXPECT(strcmp(v.version, "8.5.0") == 0 && strcmp(v.majorVersion, "8") == 0);
    EXPECT(strcmp(v.minorVersion, "5") == 0 && strcmp(v.releaseVersion, "0") == 0);
    EXPECT_CODE(aclsysGetCANNVersion((aclCANNPackageName)42, &v), ACL_ERROR_INVALID_PARAM, "42");
    EXPECT_CODE(aclsysGetCANNVersion(ACL_PKG_NAME_DRIVER, &v), ACL_ERROR_INVALID_FILE, "driver");
    char vs[ACL_PKG_VERSION_MAX_SIZE];
    char pkg[] = "runtime";
    CHECK(aclsysGetVersionStr(pkg, vs));
    EXPECT(strcmp(vs, "8.5.0") == 0);
    int32_t num = 0;
    CHECK(aclsysGetVersionNum(pkg, &num));
    EXPECT(num == 80500000);
    char nopkg[] = "nonsense";
    EXPECT_CODE(aclsysGetVersionNum(nopkg, &num), ACL_ERROR_INVALID_FILE, "nonsense");

    aclrtRunMode mode = ACL_DEVICE;
    CHECK(aclrtGetRunMode(&mode));
    EXPECT(mode == ACL_HOST);
    EXPECT_CODE(aclrtGetRunMode(NULL), ACL_ERROR_INVALID_PARAM, "runMode");

    /* The recent message is taken by aclGetRecentErrMsg: a second call gives NULL. */
    EXPECT(aclrtSetDevice(99) == ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_SUCCESS);
    const char *m1 = aclGetRecentErrMsg();
    EXPECT(m1 != NULL && strstr(m1, "aclrtSetDevice") != NULL && strstr(m1, "99") != NULL);
    EXPECT(aclGetRecentErrMsg() == NULL);
    EXPECT(aclrtSetDevice(-1) == ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_INVALID_DEVICEID);

    ACL_APP_LOG(ACL_ERROR, "app log line %d %s %.1f %lld %p", 42, "str", 1.5, -5LL, (void *)0x10);
    ACL_APP_LOG(ACL_ERROR, "many %d %d %d %d %d %d %d %d %d %d %f %g %s", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0.5,
                0.25, "end");
    CHECK(aclFinalize());

    /* Init/finalize cycles with work left behind: aclFinalize cleans up, and handles of a
     * finalized runtime are never valid again (ids are not reused). */
    aclrtStream old = NULL;
    aclrtEvent oldev = NULL;
    for (int cycle = 0; cycle < 3; cycle++) {
        CHECK(aclInit(NULL));
        CHECK(aclrtSetDevice(cycle));
        if (old != NULL) {
            EXPECT_CODE(aclrtSynchronizeStream(old), ACL_ERROR_INVALID_PARAM, "destroyed");
            EXPECT_CODE(aclrtSynchronizeEvent(oldev), ACL_ERROR_INVALID_PARAM, "destroyed");
        }
        CHECK(aclrtCreateStream(&old));
        CHECK(aclrtCreateEvent(&oldev));
        CHECK(aclrtRecordEvent(oldev, old));
        CHECK(aclFinalize()); /* stream, event and device left for aclFinalize */
    }
    /* The first init with a config fixes its content: a later init (after a finalize) must
     * give the same content (CANN compares a hash of it); inits without a config fix none. */
    write_file("a.json", "{\"defaultDevice\": {\"default_device\": \"1\"}}");
    write_file("b.json", "{\"dump\": {}}");
    CHECK(aclInit("a.json"));
    int32_t dd = -1;
    CHECK(aclrtGetDevice(&dd)); /* default device from the config, no aclrtSetDevice */
    EXPECT(dd == 1);
    CHECK(aclFinalize());
    EXPECT_CODE(aclInit("b.json"), ACL_ERROR_INVALID_PARAM, "differs");
    EXPECT_CODE(aclInit(NULL), ACL_ERROR_INVALID_PARAM, "differs");
    CHECK(aclInit("a.json"));
    CHECK(aclFinalize());
    printf("rt_lifecycle passed\n");
    return 0;
}
