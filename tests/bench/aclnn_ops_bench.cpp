/* Operator throughput against the machine's own copy, in one run:
 *   - aclrtMemcpy device-to-device of S bytes (S = 64 MiB by default);
 *   - aclnnAdd of two fp32 tensors of S bytes each into a third (two-phase call + sync);
 *   - aclnnMm of two N x N fp32 matrices (N = 1024 by default).
 * Prints medians: the copy's GB/s (bytes copied per second), Add's GB/s (bytes of output
 * per second) and their ratio, Mm's GFLOP/s (2 N^3 per product).
 *
 * Usage: aclnn_ops_bench [MiB] [N] [reps]
 * Issue 10's bars in one command, with numpy's matmul in the same run:
 *   make install && tests/bench/aclnn_vs_numpy.sh */
#include <cstdint>
#include <vector>
#include "bench.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_add.h"
#include "aclnnop/aclnn_mm.h"

#define NN(call)                                                                          \
    do {                                                                                  \
        int s_ = (call);                                                                  \
        if (s_ != 0) {                                                                    \
            const char *m_ = aclGetRecentErrMsg();                                        \
            fprintf(stderr, "%s failed: %d %s\n", #call, s_, m_ ? m_ : "");               \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static aclTensor *tensor2(void *mem, int64_t r, int64_t c) {
    int64_t shape[] = {r, c}, st[] = {c, 1};
    return aclCreateTensor(shape, 2, ACL_FLOAT, st, 0, ACL_FORMAT_ND, shape, 2, mem);
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? static_cast<size_t>(atoi(argv[1])) : 64;
    int64_t n = argc > 2 ? atoi(argv[2]) : 1024;
    int reps = argc > 3 ? atoi(argv[3]) : 15;
    size_t bytes = mib << 20;
    int64_t elems = static_cast<int64_t>(bytes / 4);
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *a, *b, *o;
    CHECK(aclrtMalloc(&a, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&b, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&o, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<float> host(static_cast<size_t>(elems));
    for (size_t i = 0; i < host.size(); i++) host[i] = static_cast<float>(i % 1000) * 0.5f;
    CHECK(aclrtMemcpy(a, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(b, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(o, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    std::vector<double> tc(static_cast<size_t>(reps)), ta(static_cast<size_t>(reps)), tm(static_cast<size_t>(reps));
    aclTensor *x = tensor2(a, elems / 1024, 1024), *y = tensor2(b, elems / 1024, 1024), *z = tensor2(o, elems / 1024, 1024);
    float one = 1;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    for (int r = 0; r < reps; r++) {
        /* alternate: copy then add, so both see the same machine state */
        double t0 = now_ns();
        CHECK(aclrtMemcpy(o, bytes, a, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE));
        double t1 = now_ns();
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        NN(aclnnAddGetWorkspaceSize(x, y, alpha, z, &ws, &ex));
        NN(aclnnAdd(nullptr, ws, ex, s));
        CHECK(aclrtSynchronizeStream(s));
        double t2 = now_ns();
        tc[static_cast<size_t>(r)] = t1 - t0;
        ta[static_cast<size_t>(r)] = t2 - t1;
    }
    std::vector<float> check(4);
    CHECK(aclrtMemcpy(check.data(), 16, o, 16, ACL_MEMCPY_DEVICE_TO_HOST));
    if (check[1] != host[1] * 2) {
        fprintf(stderr, "Add gave %f, expected %f\n", static_cast<double>(check[1]), static_cast<double>(host[1] * 2));
        return 1;
    }
    double copy_gbs = static_cast<double>(bytes) / median(tc.data(), reps);
    double add_gbs = static_cast<double>(bytes) / median(ta.data(), reps);
    printf("memcpy D2D %zu MiB: %.2f GB/s\n", mib, copy_gbs);
    printf("aclnnAdd fp32 %zu MiB: %.2f GB/s of output (%.2f GB/s read+write)\n", mib, add_gbs, 3 * add_gbs);
    printf("Add / memcpy: %.2f\n", add_gbs / copy_gbs);

    size_t mb = static_cast<size_t>(n * n * 4);
    if (mb * 3 > bytes * 3) {
        fprintf(stderr, "N too large for the buffers\n");
        return 1;
    }
    aclTensor *ma = tensor2(a, n, n), *mbt = tensor2(b, n, n), *mo = tensor2(o, n, n);
    for (int r = 0; r < reps; r++) {
        double t0 = now_ns();
        uint64_t ws = 0;
        aclOpExecutor *ex = nullptr;
        NN(aclnnMmGetWorkspaceSize(ma, mbt, mo, 0, &ws, &ex));
        NN(aclnnMm(nullptr, ws, ex, s));
        CHECK(aclrtSynchronizeStream(s));
        tm[static_cast<size_t>(r)] = now_ns() - t0;
    }
    double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    printf("aclnnMm fp32 %ldx%ld: %.1f GFLOP/s\n", static_cast<long>(n), static_cast<long>(n), flops / median(tm.data(), reps));
    aclDestroyTensor(x);
    aclDestroyTensor(y);
    aclDestroyTensor(z);
    aclDestroyTensor(ma);
    aclDestroyTensor(mbt);
    aclDestroyTensor(mo);
    aclDestroyScalar(alpha);
    CHECK(aclrtFree(a));
    CHECK(aclrtFree(b));
    CHECK(aclrtFree(o));
    return 0;
}
