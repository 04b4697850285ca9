/*
 * Holds device memory for the `npu-emu smi` test (tests/tests/cli.rs).
 *
 *   cli_hold DEV:MIB...   allocate MIB MiB on each DEV, print "meminfo DEV USED TOTAL" for each
 *                         (aclrtGetMemInfo after all allocations), print "ready", then wait
 *                         until stdin closes, free everything and exit 0.
 */
#include <stdio.h>
#include <stdlib.h>

#include "acl/acl.h"

#define CHECK(call)                                                                   \
    do {                                                                              \
        aclError e_ = (call);                                                         \
        if (e_ != ACL_SUCCESS) {                                                      \
            printf("%s failed: %d: %s\n", #call, (int)e_, aclGetRecentErrMsg());      \
            return 1;                                                                 \
        }                                                                             \
    } while (0)

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    void *ptrs[16];
    int devs[16];
    int n = argc - 1 < 16 ? argc - 1 : 16;
    CHECK(aclInit(NULL));
    for (int i = 0; i < n; ++i) {
        char *colon = NULL;
        devs[i] = (int)strtol(argv[i + 1], &colon, 10);
        size_t mib = (size_t)strtoul(colon + 1, NULL, 10);
        CHECK(aclrtSetDevice(devs[i]));
        CHECK(aclrtMalloc(&ptrs[i], mib << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    for (int i = 0; i < n; ++i) {
        size_t freeB = 0, total = 0;
        CHECK(aclrtSetDevice(devs[i]));
        CHECK(aclrtGetMemInfo(ACL_HBM_MEM, &freeB, &total));
        printf("meminfo %d %zu %zu\n", devs[i], total - freeB, total);
    }
    printf("ready\n");
    int c;
    while ((c = getchar()) != EOF) {
    }
    for (int i = 0; i < n; ++i) {
        CHECK(aclrtSetDevice(devs[i]));
        CHECK(aclrtFree(ptrs[i]));
    }
    CHECK(aclFinalize());
    printf("done\n");
    return 0;
}
