/* Throughput of TransData (a benchmark program, not a test).
 *
 * At SIZE MiB of fp16 (default 64) it times, as the median of ITERS runs (default 7):
 *   - NCHW [2*SIZE, 64, 64, 64] -> NC1HWC0 through aclopExecuteV2 + aclrtSynchronizeStream,
 *   - ND [64*SIZE, 8192] -> FRACTAL_NZ the same way,
 *   - a plain device-to-device aclrtMemcpy of the same number of bytes, in the same run,
 * and prints GB/s (source bytes / time) and each conversion's ratio to the copy (the issue's
 * bar: >= 0.5). To tell the conversion from what surrounds it, it also prints the cost of a
 * TransData on a tiny tensor (the per-call floor: checks, enqueue, stream hand-off) and the
 * enqueue time alone of the large calls.
 *
 * Build and run (from the repository root, after cargo build --release):
 *   gcc -O2 -std=c11 -Iheaders/include tests/bench/format_bench.c -o /tmp/format_bench \
 *       -Ltarget/release -lascendcl -Wl,-rpath,$PWD/target/release
 *   /tmp/format_bench [SIZE_MIB] [ITERS]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static size_t bytes_of(const int64_t *s, int n) {
    size_t b = 2;
    for (int i = 0; i < n; ++i) b *= (size_t)s[i];
    return b;
}

struct Op {
    aclTensorDesc *in, *out;
    aclDataBuffer *ib, *ob;
    aclopAttr *attr;
    void *src, *dst;
    size_t src_bytes, dst_bytes;
};

static struct Op make_op(const int64_t *ps, int pn, aclFormat pf, aclFormat qf, const char *sname,
                         const char *dname) {
    struct Op o;
    o.in = aclCreateTensorDesc(ACL_FLOAT16, pn, ps, pf);
    CHECK(aclTransTensorDescFormat(o.in, qf, &o.out));
    o.src_bytes = bytes_of(ps, pn);
    o.dst_bytes = aclGetTensorDescSize(o.out);
    CHECK(aclrtMalloc(&o.src, o.src_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&o.dst, o.dst_bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(o.src, o.src_bytes, 0x3C, o.src_bytes));
    CHECK(aclrtMemset(o.dst, o.dst_bytes, 0, o.dst_bytes));
    o.ib = aclCreateDataBuffer(o.src, o.src_bytes);
    o.ob = aclCreateDataBuffer(o.dst, o.dst_bytes);
    o.attr = aclopCreateAttr();
    CHECK(aclopSetAttrString(o.attr, "src_format", sname));
    CHECK(aclopSetAttrString(o.attr, "dst_format", dname));
    return o;
}

static void free_op(struct Op *o) {
    CHECK(aclrtFree(o->src));
    CHECK(aclrtFree(o->dst));
    CHECK(aclDestroyDataBuffer(o->ib));
    CHECK(aclDestroyDataBuffer(o->ob));
    aclopDestroyAttr(o->attr);
    aclDestroyTensorDesc(o->in);
    aclDestroyTensorDesc(o->out);
}

/* Median seconds of op + synchronize; *enqueue gets the median enqueue time alone. */
static double time_op(struct Op *o, aclrtStream s, int iters, double *enqueue) {
    double *t = malloc(sizeof(double) * (size_t)iters), *e = malloc(sizeof(double) * (size_t)iters);
    aclTensorDesc *in[1] = {o->in}, *out[1] = {o->out};
    aclDataBuffer *ib[1] = {o->ib}, *ob[1] = {o->ob};
    CHECK(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, o->attr, s)); /* warm-up */
    CHECK(aclrtSynchronizeStream(s));
    for (int i = 0; i < iters; ++i) {
        double t0 = now_ns();
        CHECK(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, o->attr, s));
        double t1 = now_ns();
        CHECK(aclrtSynchronizeStream(s));
        double t2 = now_ns();
        t[i] = (t2 - t0) * 1e-9;
        e[i] = (t1 - t0) * 1e-9;
    }
    double m = median(t, iters);
    if (enqueue) *enqueue = median(e, iters);
    free(t);
    free(e);
    return m;
}

static double time_copy(void *dst, void *src, size_t n, int iters) {
    double *t = malloc(sizeof(double) * (size_t)iters);
    CHECK(aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_DEVICE_TO_DEVICE)); /* warm-up */
    for (int i = 0; i < iters; ++i) {
        double t0 = now_ns();
        CHECK(aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_DEVICE_TO_DEVICE));
        t[i] = (now_ns() - t0) * 1e-9;
    }
    double m = median(t, iters);
    free(t);
    return m;
}

int main(int argc, char **argv) {
    int mib = argc > 1 ? atoi(argv[1]) : 64;
    int iters = argc > 2 ? atoi(argv[2]) : 7;
    if (mib < 1 || iters < 1) {
        fprintf(stderr, "usage: %s [SIZE_MIB >= 1] [ITERS >= 1]\n", argv[0]);
        return 2;
    }
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));

    int64_t nchw[4] = {2 * (int64_t)mib, 64, 64, 64};
    int64_t nd[2] = {64 * (int64_t)mib, 8192};
    int64_t tiny[4] = {1, 3, 2, 2};
    struct Op a = make_op(nchw, 4, ACL_FORMAT_NCHW, ACL_FORMAT_NC1HWC0, "NCHW", "NC1HWC0");
    struct Op b = make_op(nd, 2, ACL_FORMAT_ND, ACL_FORMAT_FRACTAL_NZ, "ND", "FRACTAL_NZ");
    struct Op t = make_op(tiny, 4, ACL_FORMAT_NCHW, ACL_FORMAT_NC1HWC0, "NCHW", "NC1HWC0");
    size_t n = a.src_bytes;
    void *c1 = NULL, *c2 = NULL;
    CHECK(aclrtMalloc(&c1, n, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&c2, n, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(c1, n, 1, n));
    CHECK(aclrtMemset(c2, n, 2, n));

    double tc = time_copy(c2, c1, n, iters);
    double ea, eb;
    double ta = time_op(&a, s, iters, &ea);
    double tb = time_op(&b, s, iters, &eb);
    double tt = time_op(&t, s, iters * 20, NULL);
    double tc2 = time_copy(c2, c1, n, iters); /* again, after the conversions */
    double copy = tc < tc2 ? tc : tc2;

    printf("fp16, %d MiB (%zu bytes), median of %d runs\n", mib, n, iters);
    printf("%-32s %8.3f ms %8.2f GB/s\n", "aclrtMemcpy D2D", copy * 1e3, n / copy * 1e-9);
    printf("%-32s %8.3f ms %8.2f GB/s  ratio %.2f  (enqueue %.3f ms)\n", "NCHW->NC1HWC0 ExecuteV2+sync",
           ta * 1e3, a.src_bytes / ta * 1e-9, copy / ta, ea * 1e3);
    printf("%-32s %8.3f ms %8.2f GB/s  ratio %.2f  (enqueue %.3f ms)\n", "ND->FRACTAL_NZ ExecuteV2+sync",
           tb * 1e3, b.src_bytes / tb * 1e-9, copy / tb, eb * 1e3);
    printf("%-32s %8.3f ms  (per-call floor: checks, enqueue, stream hand-off)\n",
           "TransData tiny [1,3,2,2]", tt * 1e3);

    free_op(&a);
    free_op(&b);
    free_op(&t);
    CHECK(aclrtFree(c1));
    CHECK(aclrtFree(c2));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
