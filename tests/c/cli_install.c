/*
 * Built by tests/tests/cli.rs against an installed tree with the plain commands a user runs
 * (-I$ASCEND_HOME_PATH/include -L$ASCEND_HOME_PATH/lib64 -lascendcl): a device round trip.
 */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

#define CHECK(call)                                                                   \
    do {                                                                              \
        aclError e_ = (call);                                                         \
        if (e_ != ACL_SUCCESS) {                                                      \
            printf("%s failed: %d: %s\n", #call, (int)e_, aclGetRecentErrMsg());      \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main(void)
{
    static unsigned char in[1 << 16], out[1 << 16];
    for (size_t i = 0; i < sizeof in; ++i) {
        in[i] = (unsigned char)(i * 13 + 5);
    }
    uint32_t n = 0;
    void *dev = NULL;
    CHECK(aclInit(NULL));
    CHECK(aclrtGetDeviceCount(&n));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtMalloc(&dev, sizeof in, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(dev, sizeof in, in, sizeof in, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(out, sizeof out, dev, sizeof in, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(aclrtFree(dev));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    if (memcmp(in, out, sizeof in) != 0) {
        printf("round trip differs\n");
        return 1;
    }
    printf("install ok: %u devices, round trip of %zu bytes\n", n, sizeof in);
    return 0;
}
