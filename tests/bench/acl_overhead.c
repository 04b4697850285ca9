/* Overhead of the runtime's stream path (a benchmark program, not a test).
 *
 * Prints the median cost of
 *   - an empty aclrtSynchronizeStream (idle stream),
 *   - an aclrtMemcpyAsync enqueue (host to device, 4 KiB),
 *   - a round trip: aclrtMemcpyAsync enqueue + aclrtSynchronizeStream,
 *   - the same two for aclrtLaunchHostFunc with an empty function.
 *
 * Build and run (from the repository root, after cargo build --release):
 *   gcc -O2 -std=c11 -Iheaders/include tests/bench/acl_overhead.c -o /tmp/acl_overhead \
 *       -Ltarget/release -lascendcl -Wl,-rpath,$PWD/target/release
 *   /tmp/acl_overhead [iterations]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "acl/acl.h"

#include "bench.h"

static void nothing(void *arg) { (void)arg; }

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    if (iters < 10) iters = 10;
    double *t = malloc(sizeof(double) * (size_t)iters);
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *dev = NULL, *host = NULL;
    int have_mem = aclrtMalloc(&dev, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS &&
                   aclrtMallocHost(&host, 4096) == ACL_SUCCESS;
    if (!have_mem) {
        const char *m = aclGetRecentErrMsg();
        printf("device memory unavailable (%s): memcpy rows skipped\n", m ? m : "");
    } else {
        memset(host, 1, 4096);
    }

    /* Warm up. */
    for (int i = 0; i < 1000; i++) {
        if (have_mem) CHECK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
        else CHECK(aclrtLaunchHostFunc(s, nothing, NULL));
        CHECK(aclrtSynchronizeStream(s));
    }

    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        CHECK(aclrtSynchronizeStream(s));
        t[i] = now_ns() - a;
    }
    double sync_empty = median(t, iters);

    double memcpy_enqueue = -1, memcpy_round = -1;
    if (have_mem) {
        for (int i = 0; i < iters; i++) {
            double a = now_ns();
            CHECK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
            t[i] = now_ns() - a;
            if (i % 64 == 63) CHECK(aclrtSynchronizeStream(s));
        }
        CHECK(aclrtSynchronizeStream(s));
        memcpy_enqueue = median(t, iters);

        for (int i = 0; i < iters; i++) {
            double a = now_ns();
            CHECK(aclrtMemcpyAsync(dev, 4096, host, 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
            CHECK(aclrtSynchronizeStream(s));
            t[i] = now_ns() - a;
        }
        memcpy_round = median(t, iters);
    }

    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        CHECK(aclrtLaunchHostFunc(s, nothing, NULL));
        t[i] = now_ns() - a;
        if (i % 64 == 63) CHECK(aclrtSynchronizeStream(s));
    }
    CHECK(aclrtSynchronizeStream(s));
    double host_enqueue = median(t, iters);

    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        CHECK(aclrtLaunchHostFunc(s, nothing, NULL));
        CHECK(aclrtSynchronizeStream(s));
        t[i] = now_ns() - a;
    }
    double host_round = median(t, iters);

    printf("iterations per measurement: %d (medians)\n", iters);
    printf("empty aclrtSynchronizeStream:                 %8.0f ns\n", sync_empty);
    printf("aclrtMemcpyAsync H2D 4 KiB enqueue:           %8.0f ns\n", memcpy_enqueue);
    printf("round trip (aclrtMemcpyAsync 4 KiB + sync):   %8.0f ns\n", memcpy_round);
    printf("aclrtLaunchHostFunc enqueue (empty function): %8.0f ns\n", host_enqueue);
    printf("round trip (aclrtLaunchHostFunc + sync):      %8.0f ns\n", host_round);

    if (have_mem) {
        CHECK(aclrtFreeHost(host));
        CHECK(aclrtFree(dev));
    }
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    free(t);
    return 0;
}
