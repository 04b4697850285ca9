/* What the benchmark programs of this directory share: an ACL check that exits with the
 * runtime's message, a monotonic clock in nanoseconds, and the median of a sample. */
#ifndef NPU_EMU_BENCH_H
#define NPU_EMU_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "acl/acl.h"

#define CHECK(call)                                                                        \
    do {                                                                                   \
        aclError e_ = (call);                                                              \
        if (e_ != ACL_SUCCESS) {                                                           \
            const char *m_ = aclGetRecentErrMsg();                                         \
            fprintf(stderr, "%s failed: %d %s\n", #call, (int)e_, m_ ? m_ : "");           \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

#endif
