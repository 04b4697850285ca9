/* aclprof*: argument checks and the JSON summary written at aclprofFinalize.
 * argv[1] = result directory. */
#include "mem_check.h"
#include "acl/acl_prof.h"

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    const char *dir = argv[1];
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(0));

    uint32_t devs[1] = {0};
    aclprofConfig *cfg = aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, NULL, ACL_PROF_ACL_API);
    CHECK(cfg != NULL);
    CHECK(aclprofCreateConfig(NULL, 1, ACL_AICORE_NONE, NULL, ACL_PROF_ACL_API) == NULL);
    uint32_t bad[1] = {999};
    CHECK(aclprofCreateConfig(bad, 1, ACL_AICORE_NONE, NULL, ACL_PROF_ACL_API) == NULL);

    /* Order and argument errors. */
    CHECK_ERR(aclprofStart(cfg), ACL_ERROR_PROF_NOT_RUN, "aclprofStart", "aclprofInit");
    CHECK_ERR(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN, "aclprofFinalize");
    CHECK_ERR(aclprofInit(NULL, 4), ACL_ERROR_INVALID_PARAM, "profilerResultPath is NULL");
    CHECK_ERR(aclprofInit(dir, 0), ACL_ERROR_INVALID_PARAM, "length 0");
    CHECK_ERR(aclprofInit(dir, 5000), ACL_ERROR_INVALID_PARAM, "length 5000");
    CHECK_OK(aclprofInit(dir, strlen(dir)));
    CHECK_ERR(aclprofInit(dir, strlen(dir)), ACL_ERROR_REPEAT_INITIALIZE, "already initialised");
    CHECK_ERR(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN, "no profiling session");
    CHECK_ERR(aclprofStart(NULL), ACL_ERROR_INVALID_PARAM, "profilerConfig is NULL");

    /* Not counted: before start. */
    void *d = NULL;
    CHECK_OK(aclrtMalloc(&d, 100, ACL_MEM_MALLOC_HUGE_FIRST));

    CHECK_OK(aclprofStart(cfg));
    CHECK_ERR(aclprofStart(cfg), ACL_ERROR_PROF_ALREADY_RUN, "already running");
    char host[100];
    for (int i = 0; i < 3; i++) CHECK_OK(aclrtMemcpy(d, 100, host, 100, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_OK(aclrtMemcpy(host, 100, d, 100, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK_OK(aclrtMemset(d, 100, 0, 100));
    (void)aclFloatToFloat16(1.0f);
    CHECK_ERR(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_PARAM, "running session");
    /* Another session may run on another device, not on device 0 again. */
    uint32_t dev1[1] = {1};
    aclprofConfig *cfg1 = aclprofCreateConfig(dev1, 1, ACL_AICORE_NONE, NULL, ACL_PROF_ACL_API);
    aclprofConfig *cfg0b = aclprofCreateConfig(devs, 1, ACL_AICORE_NONE, NULL, ACL_PROF_TASK_TIME);
    CHECK(cfg1 != NULL && cfg0b != NULL);
    CHECK_ERR(aclprofStart(cfg0b), ACL_ERROR_PROF_ALREADY_RUN, "device 0");
    CHECK_OK(aclprofStart(cfg1));
    CHECK_OK(aclprofStop(cfg1));
    CHECK_ERR(aclprofStop(cfg1), ACL_ERROR_INVALID_PARAM, "not the config of a running session");
    CHECK_OK(aclprofDestroyConfig(cfg1));
    CHECK_OK(aclprofDestroyConfig(cfg0b));
    CHECK_OK(aclprofStop(cfg));

    /* Not counted: after stop. */
    CHECK_OK(aclrtMemcpy(d, 100, host, 100, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_OK(aclrtFree(d));

    CHECK_OK(aclprofFinalize());
    CHECK_OK(aclprofDestroyConfig(cfg));
    CHECK_ERR(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_PARAM, "not a live aclprofConfig");
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    printf("prof ok\n");
    return 0;
}
