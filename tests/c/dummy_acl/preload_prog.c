/* Linked against the dummy libascendcl.so; correct only when the real one (ours) is used. */
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"

int main(void)
{
    aclError e = aclInit(NULL);
    if (e != ACL_SUCCESS) {
        printf("aclInit failed: %d (%s)\n", (int)e, aclGetRecentErrMsg());
        return 2;
    }
    if (aclrtSetDevice(0) != ACL_SUCCESS) return 3;
    char in[1000], out[1000];
    for (int i = 0; i < 1000; i++) in[i] = (char)(i * 3);
    void *d = NULL;
    if (aclrtMalloc(&d, sizeof(in), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 4;
    if (aclrtMemcpy(d, sizeof(in), in, sizeof(in), ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) return 5;
    memset(out, 0, sizeof(out));
    if (aclrtMemcpy(out, sizeof(out), d, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) return 6;
    if (memcmp(in, out, sizeof(in)) != 0) return 7;
    if (aclFloatToFloat16(1.0f) != 0x3C00) return 8;
    if (aclrtFree(d) != ACL_SUCCESS) return 9;
    if (aclrtResetDevice(0) != ACL_SUCCESS) return 10;
    if (aclFinalize() != ACL_SUCCESS) return 11;
    printf("preload ok\n");
    return 0;
}
