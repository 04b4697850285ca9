/* Throughput of TransData (a benchmark program, not a test).
 *
 * At SIZE MiB of fp16 (default 64) it times, as the median of ITERS runs (default 7):
 *   - NCHW [2*SIZE, 64, 64, 64] -> NC1HWC0 through aclopExecuteV2 + aclrtSynchronizeStream,
 *   - ND [64*SIZE, 8192] -> FRACTAL_NZ the same way,
 *   - a plain device-to-device aclrtMemcpy of the same number of bytes, in the same run,
 * and prints GB/s (source bytes / time) and each conversion's ratio to the copy (the issue's
 * bar: >= 0.5). To tell the conversion from what surrounds it, it also prints the cost of a
 * TransData on a tiny tensor (the per-call floor: checks, enqueue, stream hand-off) and the
 * enqueue time alone of the large calls. The runs are interleaved (copy, NCHW, ND per
 * round) and each ratio is the median of the per-round ratios.
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

#include "bench.h"

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

/* Seconds of one op + synchronize; *enqueue gets the enqueue time alone. */
static double once_op(struct Op *o, aclrtStream s, double *enqueue) {
    aclTensorDesc *in[1] = {o->in}, *out[1] = {o->out};
    aclDataBuffer *ib[1] = {o->ib}, *ob[1] = {o->ob};
    double t0 = now_ns();
    CHECK(aclopExecuteV2("TransData", 1, in, ib, 1, out, ob, o->attr, s));
    double t1 = now_ns();
    CHECK(aclrtSynchronizeStream(s));
    double t2 = now_ns();
    if (enqueue) *enqueue = (t1 - t0) * 1e-9;
    return (t2 - t0) * 1e-9;
}

static double once_copy(void *dst, void *src, size_t n) {
    double t0 = now_ns();
    CHECK(aclrtMemcpy(dst, n, src, n, ACL_MEMCPY_DEVICE_TO_DEVICE));
    return (now_ns() - t0) * 1e-9;
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

    /* Interleaved: each round times the copy and both conversions back to back, so a
     * machine whose load drifts slows all three alike; ratios are per round, then the
     * median is taken. */
    double *tc = calloc((size_t)iters, sizeof(double)), *ta = calloc((size_t)iters, sizeof(double));
    double *tb = calloc((size_t)iters, sizeof(double)), *ra = calloc((size_t)iters, sizeof(double));
    double *rb = calloc((size_t)iters, sizeof(double)), *ea = calloc((size_t)iters, sizeof(double));
    double *eb = calloc((size_t)iters, sizeof(double)), *tt = calloc((size_t)iters * 20, sizeof(double));
    once_copy(c2, c1, n); /* warm-up: pages touched, code paths hot */
    once_op(&a, s, NULL);
    once_op(&b, s, NULL);
    for (int i = 0; i < iters; ++i) {
        tc[i] = once_copy(c2, c1, n);
        ta[i] = once_op(&a, s, &ea[i]);
        tb[i] = once_op(&b, s, &eb[i]);
        ra[i] = tc[i] / ta[i];
        rb[i] = tc[i] / tb[i];
    }
    for (int i = 0; i < iters * 20; ++i) tt[i] = once_op(&t, s, NULL);
    double copy = median(tc, iters), mta = median(ta, iters), mtb = median(tb, iters);
    double mra = median(ra, iters), mrb = median(rb, iters);
    double mea = median(ea, iters), meb = median(eb, iters), mtt = median(tt, iters * 20);

    printf("fp16, %d MiB (%zu bytes), median of %d runs\n", mib, n, iters);
    printf("%-32s %8.3f ms %8.2f GB/s\n", "aclrtMemcpy D2D", copy * 1e3, n / copy * 1e-9);
    printf("%-32s %8.3f ms %8.2f GB/s  ratio %.2f  (enqueue %.3f ms)\n", "NCHW->NC1HWC0 ExecuteV2+sync",
           mta * 1e3, a.src_bytes / mta * 1e-9, mra, mea * 1e3);
    printf("%-32s %8.3f ms %8.2f GB/s  ratio %.2f  (enqueue %.3f ms)\n", "ND->FRACTAL_NZ ExecuteV2+sync",
           mtb * 1e3, b.src_bytes / mtb * 1e-9, mrb, meb * 1e3);
    printf("%-32s %8.3f ms  (per-call floor: checks, enqueue, stream hand-off)\n",
           "TransData tiny [1,3,2,2]", mtt * 1e3);
    free(tc); free(ta); free(tb); free(ra); free(rb); free(ea); free(eb); free(tt);

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
