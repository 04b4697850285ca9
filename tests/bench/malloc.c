/* Cost of aclrtMalloc and aclrtFree by size (a benchmark program, not a test). For each
 * size, the median over repetitions of
 *   - aclrtMalloc,
 *   - aclrtFree,
 *   - the first aclrtMemset of the whole buffer after aclrtMalloc (the pages' first touch),
 *   - a second aclrtMemset (memory speed, for comparison),
 * and, in the same run, the peer: an anonymous mmap of the same size, and its first memset
 * (the kernel allocating and clearing the pages), with the ratios of ours to the peer's.
 *
 * One command (builds everything, prints the load): tests/bench/run.sh malloc
 * (the program takes the repetition count as its argument, default 5).
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "acl/acl.h"
#include "bench.h"

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64;
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    const size_t sizes[] = {1 << 20, 64 << 20, 256 << 20, (size_t)1 << 30};
    printf("%12s %10s %10s %13s %13s %10s %13s %10s %14s   (ms, medians of %d)\n", "bytes", "malloc",
           "free", "first memset", "second memset", "peer mmap", "peer memset", "malloc/", "(malloc+1st)/",
           reps);
    printf("%12s %10s %10s %13s %13s %10s %13s %10s %14s\n", "", "", "", "", "", "", "", "peer mmap",
           "(mmap+memset)");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        double tm[64], tf[64], t1[64], t2[64], pm[64], p1[64], tot[64], ptot[64];
        for (int i = 0; i < reps; i++) {
            void *p = NULL;
            double a = now_ns();
            CHECK(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
            double b = now_ns();
            CHECK(aclrtMemset(p, n, 1, n));
            double c = now_ns();
            CHECK(aclrtMemset(p, n, 2, n));
            double d = now_ns();
            CHECK(aclrtFree(p));
            double e = now_ns();
            tm[i] = b - a;
            t1[i] = c - b;
            t2[i] = d - c;
            tf[i] = e - d;
            tot[i] = c - a;
            /* The peer: fresh anonymous pages, allocated and cleared by the kernel. */
            a = now_ns();
            char *h = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            b = now_ns();
            if (h == MAP_FAILED) {
                perror("mmap");
                return 1;
            }
            memset(h, 1, n);
            c = now_ns();
            munmap(h, n);
            pm[i] = b - a;
            p1[i] = c - b;
            ptot[i] = c - a;
        }
        double mm = median(tm, reps), pmm = median(pm, reps);
        printf("%12zu %10.3f %10.3f %13.3f %13.3f %10.3f %13.3f %10.0f %14.2f\n", n, mm / 1e6,
               median(tf, reps) / 1e6, median(t1, reps) / 1e6, median(t2, reps) / 1e6, pmm / 1e6,
               median(p1, reps) / 1e6, mm / pmm, median(tot, reps) / median(ptot, reps));
    }
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
