/* Calls an exported function that is still a stub, twice, through the dynamic symbol table,
 * and prints its return values (and, for ACL, aclGetRecentErrMsg).
 * Usage: stub_call acl|hccl NAME. Stubs ignore their arguments, so calling one without
 * arguments is ABI-safe on x86-64 and aarch64. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "acl/acl.h"
#include "hccl/hccl.h"

typedef int (*stub_fn)(void);

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s acl|hccl NAME\n", argv[0]);
        return 2;
    }
    /* Make sure both libraries are really linked in. */
    printf("ACL_ERROR_API_NOT_SUPPORT=%d HCCL_E_NOT_SUPPORT=%d\n", ACL_ERROR_API_NOT_SUPPORT,
           (int)HCCL_E_NOT_SUPPORT);
    void *sym = dlsym(RTLD_DEFAULT, argv[2]);
    if (sym == NULL) {
        printf("%s is not exported\n", argv[2]);
        return 1;
    }
    stub_fn fn;
    memcpy(&fn, &sym, sizeof(fn));
    int first = fn();
    int second = fn();
    printf("%s returned %d %d\n", argv[2], first, second);
    if (strcmp(argv[1], "acl") == 0) {
        const char *msg = aclGetRecentErrMsg();
        printf("message: %s\n", msg != NULL ? msg : "(null)");
    }
    return 0;
}
