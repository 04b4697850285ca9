/* Per-launch cost of Ascend C kernels on a warm AI-core pool (a benchmark program, not a
 * test). Prints medians of
 *   - launch + aclrtSynchronizeStream of an empty kernel, 1 and 48 blocks,
 *   - launch + synchronize of bench_tiny_add (16 floats per block), 1, 8 and 48 blocks,
 *   - the launch call alone (enqueue), 48 blocks,
 *   - 16 launches then one synchronize, per launch, 48 blocks,
 * and, in the same run, two peers doing the same 48 tiny additions on host arrays:
 *   - 48 std::thread spawned and joined (a thread per block),
 *   - an OpenMP parallel loop of 48 iterations (a warm thread pool, like the AI-core pool),
 * with the ratio of our 48-block launch + synchronize to each.
 *
 * One command (builds everything, prints the load): tests/bench/run.sh kernel
 *
 * Built and run by tests/bench/run.sh (the kernels go through `npu-emu ascendc-stub`; the
 * program takes the iteration count as its argument, default 2000).
 */
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include "acl/acl.h"
#include "aclrtlaunch_bench_empty.h"
#include "aclrtlaunch_bench_tiny_add.h"

extern "C" {
#include "bench.h"
}

static aclrtStream g_s;
static void *g_x, *g_y, *g_z;

static void launch_tiny(uint32_t blocks) { CHECK(ACLRT_LAUNCH_KERNEL(bench_tiny_add)(blocks, g_s, g_x, g_y, g_z)); }
static void launch_empty(uint32_t blocks) { CHECK(ACLRT_LAUNCH_KERNEL(bench_empty)(blocks, g_s, g_x)); }

/* The peers' work: block b of the tiny add on host arrays. */
static void host_tiny_add(const float *x, const float *y, float *z, int b) {
    for (int i = 16 * b; i < 16 * (b + 1); i++) z[i] = x[i] + y[i];
}

/* Median of 48 std::thread spawn + join, each doing one block of the tiny add. */
static double peer_threads(int iters, std::vector<double> &t, const float *x, const float *y, float *z) {
    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        std::vector<std::thread> th;
        th.reserve(48);
        for (int b = 0; b < 48; b++) th.emplace_back(host_tiny_add, x, y, z, b);
        for (auto &h : th) h.join();
        t[i] = now_ns() - a;
    }
    return median(t.data(), iters);
}

/* Median of an OpenMP parallel loop of 48 iterations of the tiny add (warm pool). */
static double peer_openmp(int iters, std::vector<double> &t, const float *x, const float *y, float *z) {
    for (int i = 0; i < iters + 20; i++) {
        double a = now_ns();
#pragma omp parallel for schedule(static)
        for (int b = 0; b < 48; b++) host_tiny_add(x, y, z, b);
        if (i >= 20) t[i - 20] = now_ns() - a;
    }
    return median(t.data(), iters);
}

/* Median of launch + synchronize. */
static double round_trip(void (*launch)(uint32_t), uint32_t blocks, int iters, std::vector<double> &t) {
    for (int i = 0; i < 20; i++) {
        launch(blocks);
        CHECK(aclrtSynchronizeStream(g_s));
    }
    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        launch(blocks);
        CHECK(aclrtSynchronizeStream(g_s));
        t[i] = now_ns() - a;
    }
    return median(t.data(), iters);
}

int main(int argc, char **argv) {
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    if (iters < 16) iters = 16;
    std::vector<double> t(iters);
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    CHECK(aclrtCreateStream(&g_s));
    const size_t bytes = 48 * 16 * sizeof(float);
    CHECK(aclrtMalloc(&g_x, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&g_y, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&g_z, bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<float> hx(48 * 16), hy(48 * 16), hz(48 * 16);
    for (size_t i = 0; i < hx.size(); i++) {
        hx[i] = (float)i;
        hy[i] = 0.5f * (float)i;
    }
    CHECK(aclrtMemcpy(g_x, bytes, hx.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(g_y, bytes, hy.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    double e1 = round_trip(launch_empty, 1, iters, t);
    double e48 = round_trip(launch_empty, 48, iters, t);
    double t1 = round_trip(launch_tiny, 1, iters, t);
    double t8 = round_trip(launch_tiny, 8, iters, t);
    double t48 = round_trip(launch_tiny, 48, iters, t);

    for (int i = 0; i < iters; i++) {
        double a = now_ns();
        launch_tiny(48);
        t[i] = now_ns() - a;
        CHECK(aclrtSynchronizeStream(g_s));
    }
    double enq = median(t.data(), iters);

    int batches = iters / 16;
    for (int i = 0; i < batches; i++) {
        double a = now_ns();
        for (int k = 0; k < 16; k++) launch_tiny(48);
        CHECK(aclrtSynchronizeStream(g_s));
        t[i] = (now_ns() - a) / 16;
    }
    double batched = median(t.data(), batches);

    std::vector<float> pz(48 * 16);
    int peer_iters = iters < 500 ? iters : 500; /* thread spawns are slow: fewer */
    double p_threads = peer_threads(peer_iters, t, hx.data(), hy.data(), pz.data());
    double p_omp = peer_openmp(iters, t, hx.data(), hy.data(), pz.data());

    /* The result is right. */
    CHECK(aclrtMemcpy(hz.data(), bytes, g_z, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    for (size_t i = 0; i < hz.size(); i++) {
        if (hz[i] != hx[i] + hy[i]) {
            fprintf(stderr, "wrong result at %zu: %f\n", i, hz[i]);
            return 1;
        }
    }

    printf("iterations per measurement: %d (medians, microseconds)\n", iters);
    printf("empty kernel,  1 block,  launch + sync:   %8.1f\n", e1 / 1e3);
    printf("empty kernel, 48 blocks, launch + sync:   %8.1f\n", e48 / 1e3);
    printf("tiny add,      1 block,  launch + sync:   %8.1f\n", t1 / 1e3);
    printf("tiny add,      8 blocks, launch + sync:   %8.1f\n", t8 / 1e3);
    printf("tiny add,     48 blocks, launch + sync:   %8.1f\n", t48 / 1e3);
    printf("tiny add,     48 blocks, launch call:     %8.1f\n", enq / 1e3);
    printf("tiny add,     48 blocks, 16 launches + 1 sync, per launch: %8.1f\n", batched / 1e3);
    printf("peer: 48 std::thread spawn + join (tiny add):   %8.1f   ours/peer %.3f\n", p_threads / 1e3,
           t48 / p_threads);
    printf("peer: OpenMP parallel for, 48 iterations:       %8.1f   ours/peer %.2f\n", p_omp / 1e3,
           t48 / p_omp);

    CHECK(aclrtFree(g_x));
    CHECK(aclrtFree(g_y));
    CHECK(aclrtFree(g_z));
    CHECK(aclrtDestroyStream(g_s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
