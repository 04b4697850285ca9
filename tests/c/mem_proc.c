/* Helper for the multi-process accounting test.
 *   mem_proc hold DEV SIZE   allocate SIZE bytes on DEV, print "held", wait for a line on
 *                            stdin, free and exit
 *   mem_proc query DEV       print "free=<n> total=<n>" from aclrtGetMemInfo(ACL_HBM_MEM) */
#include "mem_check.h"

int main(int argc, char **argv)
{
    CHECK(argc >= 3);
    int dev = atoi(argv[2]);
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(dev));
    if (strcmp(argv[1], "hold") == 0) {
        CHECK(argc == 4);
        size_t size = strtoull(argv[3], NULL, 10);
        void *p = NULL;
        CHECK_OK(aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_OK(aclrtMemset(p, size, 1, size));
        printf("held\n");
        fflush(stdout);
        char line[16];
        if (!fgets(line, sizeof(line), stdin)) { /* EOF also releases */ }
        CHECK_OK(aclrtFree(p));
    } else {
        size_t fr = 0, tot = 0;
        CHECK_OK(aclrtGetMemInfo(ACL_HBM_MEM, &fr, &tot));
        printf("free=%zu total=%zu\n", fr, tot);
    }
    CHECK_OK(aclrtResetDevice(dev));
    CHECK_OK(aclFinalize());
    return 0;
}
