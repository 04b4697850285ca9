/* Host code dereferences a device pointer: the process must stop with SIGSEGV and a message
 * naming the address, the allocation and that host code touched device memory.
 *   mem_fault read|write */
#include "mem_check.h"

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(1));
    void *p = NULL;
    CHECK_OK(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    volatile unsigned char *q = (volatile unsigned char *)p + 100;
    printf("target=%p\n", (void *)q);
    fflush(stdout);
    if (strcmp(argv[1], "write") == 0) {
        *q = 1;
    } else {
        unsigned char c = *q;
        printf("read %u\n", c);
    }
    printf("host access to device memory was not caught\n");
    return 0;
}
