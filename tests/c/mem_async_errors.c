/* An async copy whose device memory is freed before the stream runs it fails at the next
 * synchronize with a message, instead of writing freed memory. A host function holds the
 * stream so the order is deterministic. */
#define _POSIX_C_SOURCE 200809L
#include "mem_check.h"
#include <semaphore.h>

static sem_t gate;

static void hold_stream(void *arg)
{
    (void)arg;
    while (sem_wait(&gate) != 0) {
    }
}

int main(void)
{
    CHECK(sem_init(&gate, 0, 0) == 0);
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK_OK(aclrtCreateStream(&s));
    enum { N = 1 << 16 };
    /* ACL host memory: the copies really are queued (pageable memory would make
     * aclrtMemcpyAsync wait for the held stream, as in CANN). */
    char *host = NULL, *host2 = NULL, *back = NULL;
    CHECK_OK(aclrtMallocHost((void **)&host, N));
    CHECK_OK(aclrtMallocHost((void **)&host2, N));
    CHECK_OK(aclrtMallocHost((void **)&back, N));
    mc_fill(host, N, 3);
    void *d = NULL, *keep = NULL;
    CHECK_OK(aclrtMalloc(&keep, N, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtMalloc(&d, N, ACL_MEM_MALLOC_HUGE_FIRST));

    /* Copy and memset queued behind the held stream; then the program frees d. */
    CHECK_OK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    CHECK_OK(aclrtMemcpyAsync(d, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s));
    CHECK_OK(aclrtMemsetAsync(d, N, 0, N, s));
    CHECK_OK(aclrtMemcpyAsync(keep, N, host, N, ACL_MEMCPY_HOST_TO_DEVICE, s));
    CHECK_OK(aclrtFree(d));
    char dstr[32];
    snprintf(dstr, sizeof(dstr), "%p", d);
    sem_post(&gate);
    CHECK_ERR(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync", "dst", dstr);
    /* The error was reported once; the stream is usable again, and the copy queued after
     * the failing ones ran. */
    CHECK_OK(aclrtSynchronizeStream(s));
    CHECK_OK(aclrtMemcpy(back, N, keep, N, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(mc_verify(back, N, 3) < 0);

    /* ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE stages the host data at call time: the program may
     * overwrite its buffer at once. A plain H2D copy reads the host buffer when it runs. */
    void *d2 = NULL;
    CHECK_OK(aclrtMalloc(&d2, N, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtLaunchHostFunc(s, hold_stream, NULL));
    mc_fill(host, N, 4);
    CHECK_OK(aclrtMemcpyAsync(keep, N, host, N, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, s));
    mc_fill(host2, N, 5);
    CHECK_OK(aclrtMemcpyAsync(d2, N, host2, N, ACL_MEMCPY_HOST_TO_DEVICE, s));
    mc_fill(host, N, 6);
    mc_fill(host2, N, 7);
    sem_post(&gate);
    CHECK_OK(aclrtSynchronizeStream(s));
    CHECK_OK(aclrtMemcpy(back, N, keep, N, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(mc_verify(back, N, 4) < 0);
    CHECK_OK(aclrtMemcpy(back, N, d2, N, ACL_MEMCPY_DEVICE_TO_HOST));
    CHECK(mc_verify(back, N, 7) < 0);

    CHECK_OK(aclrtFree(d2));
    CHECK_OK(aclrtFreeHost(host));
    CHECK_OK(aclrtFreeHost(host2));
    CHECK_OK(aclrtFreeHost(back));
    CHECK_OK(aclrtFree(keep));
    CHECK_OK(aclrtDestroyStream(s));
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    printf("async errors ok\n");
    return 0;
}
