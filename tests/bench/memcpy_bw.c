/* Copy bandwidth of the ACL copy paths against a plain memcpy in the same run (a benchmark
 * program, not a test). For each size, the median over repetitions of
 *   - memcpy between two host buffers (the machine's single-thread copy rate),
 *   - aclrtMemcpy host to device, device to host, device to device,
 *   - aclrtMemcpyAsync device to device + aclrtSynchronizeStream,
 *   - aclrtMemset of the device buffer,
 * in GB/s of bytes copied (compare with reference/performance.md: one thread copies 42-51
 * GB/s in cache, 9-12 GB/s from DRAM; two threads 20-22 GB/s from DRAM). Every buffer is
 * touched before it is timed.
 *
 * One command (builds everything, prints the load): tests/bench/run.sh memcpy
 * (the program takes the largest size in MiB as its argument, default 256).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acl/acl.h"
#include "bench.h"

static double gbps(size_t bytes, double ns) { return (double)bytes / ns; }

int main(int argc, char **argv) {
    size_t max_mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    size_t max = max_mib << 20;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *d1, *d2, *h1, *h2;
    CHECK(aclrtMalloc(&d1, max, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&d2, max, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMallocHost(&h1, max));
    CHECK(aclrtMallocHost(&h2, max));
    memset(h1, 1, max);
    memset(h2, 2, max);
    CHECK(aclrtMemset(d1, max, 3, max));
    CHECK(aclrtMemset(d2, max, 4, max));
    printf("%10s %9s %9s %9s %9s %9s %9s   (GB/s, medians)\n", "bytes", "memcpy", "H2D", "D2H",
           "D2D", "D2Dasync", "memset");
    double t[64];
    for (size_t n = 64 << 10; n <= max; n *= 4) {
        int reps = n <= (1 << 20) ? 63 : n <= (16 << 20) ? 21 : 7;
        double r[6];
        for (int k = 0; k < 6; k++) {
            for (int i = 0; i < reps; i++) {
                double a = now_ns();
                switch (k) {
                case 0: memcpy(h2, h1, n); break;
                case 1: CHECK(aclrtMemcpy(d1, max, h1, n, ACL_MEMCPY_HOST_TO_DEVICE)); break;
                case 2: CHECK(aclrtMemcpy(h2, max, d1, n, ACL_MEMCPY_DEVICE_TO_HOST)); break;
                case 3: CHECK(aclrtMemcpy(d2, max, d1, n, ACL_MEMCPY_DEVICE_TO_DEVICE)); break;
                case 4:
                    CHECK(aclrtMemcpyAsync(d2, max, d1, n, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
                    CHECK(aclrtSynchronizeStream(s));
                    break;
                case 5: CHECK(aclrtMemset(d1, max, (int)i, n)); break;
                }
                t[i] = now_ns() - a;
            }
            r[k] = gbps(n, median(t, reps));
        }
        printf("%10zu %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", n, r[0], r[1], r[2], r[3], r[4], r[5]);
    }
    CHECK(aclrtFree(d1));
    CHECK(aclrtFree(d2));
    CHECK(aclrtFreeHost(h1));
    CHECK(aclrtFreeHost(h2));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
