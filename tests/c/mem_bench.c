/* Memory API figures (a benchmark program, not a test): copy bandwidth per kind, the cost of
 * an aclrtMemcpyAsync enqueue, of aclrtMalloc+aclrtFree and of aclrtMemset.
 *   mem_bench [MiB]   (default 64) */
#define _POSIX_C_SOURCE 200809L
#include "mem_check.h"
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
    size_t n = mib << 20;
    CHECK_OK(aclInit(NULL));
    CHECK_OK(aclrtSetDevice(0));
    void *h = NULL, *a = NULL, *b = NULL;
    CHECK_OK(aclrtMallocHost(&h, n));
    CHECK_OK(aclrtMalloc(&a, n, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_OK(aclrtMalloc(&b, n, ACL_MEM_MALLOC_HUGE_FIRST));
    memset(h, 1, n);
    CHECK_OK(aclrtMemcpy(a, n, h, n, ACL_MEMCPY_HOST_TO_DEVICE)); /* touch pages */
    CHECK_OK(aclrtMemcpy(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE));
    const struct { const char *name; void *d; void *s; aclrtMemcpyKind k; } kinds[] = {
        {"H2D", a, h, ACL_MEMCPY_HOST_TO_DEVICE},
        {"D2H", h, a, ACL_MEMCPY_DEVICE_TO_HOST},
        {"D2D", b, a, ACL_MEMCPY_DEVICE_TO_DEVICE},
    };
    for (int k = 0; k < 3; k++) {
        int reps = 5;
        double t0 = now();
        for (int r = 0; r < reps; r++) CHECK_OK(aclrtMemcpy(kinds[k].d, n, kinds[k].s, n, kinds[k].k));
        double dt = (now() - t0) / reps;
        printf("aclrtMemcpy %s %zu MiB: %.2f ms, %.2f GB/s\n", kinds[k].name, mib, dt * 1e3, n / dt / 1e9);
    }
    double t0 = now();
    CHECK_OK(aclrtMemset(a, n, 7, n));
    printf("aclrtMemset %zu MiB: %.2f ms\n", mib, (now() - t0) * 1e3);

    aclrtStream s;
    CHECK_OK(aclrtCreateStream(&s));
    enum { M = 20000 };
    t0 = now();
    for (int i = 0; i < M; i++) CHECK_OK(aclrtMemcpyAsync(a, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE, s));
    double enq = (now() - t0) / M;
    CHECK_OK(aclrtSynchronizeStream(s));
    double all = (now() - t0) / M;
    printf("aclrtMemcpyAsync 64 B: %.2f us per enqueue, %.2f us per copy including execution\n", enq * 1e6, all * 1e6);

    t0 = now();
    for (int i = 0; i < M; i++) {
        void *p = NULL;
        CHECK_OK(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_OK(aclrtFree(p));
    }
    printf("aclrtMalloc+aclrtFree 4 KiB: %.2f us per pair\n", (now() - t0) / M * 1e6);
    t0 = now();
    for (int i = 0; i < M; i++) CHECK_OK(aclrtMemcpy(a, 64, h, 64, ACL_MEMCPY_HOST_TO_DEVICE));
    printf("aclrtMemcpy 64 B H2D: %.2f us per call\n", (now() - t0) / M * 1e6);

    CHECK_OK(aclrtDestroyStream(s));
    CHECK_OK(aclrtFree(a));
    CHECK_OK(aclrtFree(b));
    CHECK_OK(aclrtFreeHost(h));
    CHECK_OK(aclrtResetDevice(0));
    CHECK_OK(aclFinalize());
    return 0;
}
