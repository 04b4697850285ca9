/* Asynchronous copies the reliability campaign crashed (tests/tests/reliability.rs):
 *  - ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE with a device source (the pointers make it a
 *    device-to-device copy), and from a device to pinned host memory: the data must arrive;
 *  - pinned host memory (aclrtMallocHost) freed before the queued copy runs, for 4 KiB,
 *    64 KiB and 4 MiB, host-to-device and device-to-host: an error at the next synchronize,
 *    never a read or write of freed memory.
 * Prints "copies passed" when all is as it should be; exits 1 naming the first surprise. */
#define _POSIX_C_SOURCE 200809L
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#define OK(call)                                                                         \
    do {                                                                                 \
        aclError e_ = (call);                                                            \
        if (e_ != ACL_SUCCESS) {                                                         \
            printf("FAIL line %d: %s -> %d: %s\n", __LINE__, #call, (int)e_,             \
                   aclGetRecentErrMsg());                                                \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)
#define EXPECT(cond)                                                                     \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                               \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

static sem_t gate;
static void hold(void *arg) {
    (void)arg;
    while (sem_wait(&gate) != 0) {
    }
}

int main(void) {
    sem_init(&gate, 0, 0);
    OK(aclInit(NULL));
    OK(aclrtSetDevice(0));
    aclrtStream s;
    OK(aclrtCreateStream(&s));
    enum { N = 1 << 16 };
    void *a = NULL, *b = NULL;
    OK(aclrtMalloc(&a, N, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMalloc(&b, N, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(a, N, 0x3c, N));
    OK(aclrtMemset(b, N, 0, N));

    /* The staged kind with a device source: a device-to-device copy. */
    OK(aclrtMemcpyAsync(b, N, a, N, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, s));
    OK(aclrtSynchronizeStream(s));
    unsigned char *back = malloc(N);
    OK(aclrtMemcpy(back, N, b, N, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < N; i++) EXPECT(back[i] == 0x3c);
    /* ... and from a device to pinned host memory. */
    unsigned char *pin = NULL;
    OK(aclrtMallocHost((void **)&pin, N));
    memset(pin, 0, N);
    OK(aclrtMemcpyAsync(pin, N, a, N, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, s));
    OK(aclrtSynchronizeStream(s));
    for (int i = 0; i < N; i++) EXPECT(pin[i] == 0x3c);
    OK(aclrtFreeHost(pin));
    printf("staged kind with a device source: ok\n");

    /* Pinned memory freed before the queued copy runs. */
    size_t sizes[] = {4096, 65536, 4 << 20};
    void *big = NULL;
    OK(aclrtMalloc(&big, 4 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    OK(aclrtMemset(big, 4 << 20, 0x11, 4 << 20));
    for (int k = 0; k < 3; k++) {
        for (int to_dev = 0; to_dev < 2; to_dev++) {
            size_t n = sizes[k];
            void *h = NULL;
            OK(aclrtMallocHost(&h, n));
            memset(h, 0x77, n);
            OK(aclrtLaunchHostFunc(s, hold, NULL));
            if (to_dev)
                OK(aclrtMemcpyAsync(big, 4 << 20, h, n, ACL_MEMCPY_HOST_TO_DEVICE, s));
            else
                OK(aclrtMemcpyAsync(h, n, big, n, ACL_MEMCPY_DEVICE_TO_HOST, s));
            OK(aclrtFreeHost(h));
            sem_post(&gate);
            aclError e = aclrtSynchronizeStream(s);
            const char *m = aclGetRecentErrMsg();
            printf("%zu bytes %s, pinned memory freed first: sync -> %d %s\n", n,
                   to_dev ? "to the device" : "to the host", (int)e, m ? m : "");
            EXPECT(e != ACL_SUCCESS);
            EXPECT(m && strstr(m, "was freed after the copy was queued"));
            OK(aclrtSynchronizeStream(s));
        }
    }
    unsigned char *chk = malloc(4 << 20);
    OK(aclrtMemcpy(chk, 4 << 20, big, 4 << 20, ACL_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < (4 << 20); i++) EXPECT(chk[i] == 0x11);
    printf("device memory untouched\n");
    OK(aclrtFree(a));
    OK(aclrtFree(b));
    OK(aclrtFree(big));
    OK(aclrtDestroyStream(s));
    OK(aclFinalize());
    printf("copies passed\n");
    return 0;
}
