/* Host side of the kernel probes in kernels.cpp (tests/tests/kernel_probes.rs). One run per
 * case: `probe_host misc|ws|pad2d|uneven|args` or `probe_host err MODE [BLOCKDIM]`. Prints PASS or
 * FAIL (exit 1) for the data cases; prints the launch and synchronize codes and messages for
 * the others, which the test checks. */
#include "acl/acl.h"
#include "probe_host_tiling.h"
#include "aclrtlaunch_err_kernel.h"
#include "aclrtlaunch_uneven_add.h"
#include "aclrtlaunch_misc_kernel.h"
#include "aclrtlaunch_pad2d.h"
#include "aclrtlaunch_ws_kernel.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK_ACL(x)                                                                             \
    do {                                                                                         \
        aclError r_ = (x);                                                                       \
        if (r_ != ACL_SUCCESS) {                                                                 \
            std::printf("%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #x, r_, aclGetRecentErrMsg()); \
            std::exit(2);                                                                        \
        }                                                                                        \
    } while (0)

static void *DevAlloc(size_t n)
{
    void *p = nullptr;
    CHECK_ACL(aclrtMalloc(&p, n, ACL_MEM_MALLOC_HUGE_FIRST));
    return p;
}

static void Report(const char *what, uint32_t code)
{
    const char *m = aclGetRecentErrMsg();
    std::printf("%s: %u [%s]\n", what, code, m ? m : "");
}

static int Misc(aclrtStream s)
{
    const uint32_t n = 64, bd = 3, total = n * bd;
    std::vector<float> x(total), y(total);
    for (uint32_t i = 0; i < total; i++) {
        x[i] = (float)i - 10;
    }
    void *xd = DevAlloc(total * 4), *yd = DevAlloc(total * 4);
    CHECK_ACL(aclrtMemcpy(xd, total * 4, x.data(), total * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(ACLRT_LAUNCH_KERNEL(misc_kernel)(bd, s, xd, yd, n));
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_ACL(aclrtMemcpy(y.data(), total * 4, yd, total * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (uint32_t b = 0; b < bd; b++) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t k = b * n + i;
            float w = x[k] * 2;
            w = w < -4 ? -4 : (w > 100 ? 100 : w);
            w += i < 8 ? 1000 : 0;
            if (b == 0 && i == n - 1) {
                w = x[1] * 3;
            }
            if (y[k] != w && bad++ < 5) {
                std::printf("misc: y[%u] = %g, want %g\n", k, y[k], w);
            }
        }
    }
    return bad;
}

static int Ws(aclrtStream s)
{
    /* The default stream (nullptr) and a nullptr workspace, as samples without a workspace pass. */
    (void)s;
    const uint32_t n = 64, bd = 4;
    int32_t x[n * bd], y[n * bd];
    for (uint32_t i = 0; i < n * bd; i++) {
        x[i] = (int32_t)i - 100;
    }
    void *xd = DevAlloc(sizeof x), *yd = DevAlloc(sizeof y), *td = DevAlloc(8);
    uint32_t t[2] = {n, 7};
    CHECK_ACL(aclrtMemcpy(td, 8, t, 8, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(aclrtMemcpy(xd, sizeof x, x, sizeof x, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(ACLRT_LAUNCH_KERNEL(ws_kernel)(bd, nullptr, xd, yd, nullptr, td));
    CHECK_ACL(aclrtSynchronizeDevice());
    CHECK_ACL(aclrtMemcpy(y, sizeof y, yd, sizeof y, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (uint32_t i = 0; i < n * bd; i++) {
        if (y[i] != x[i] + 7 && bad++ < 5) {
            std::printf("ws: y[%u] = %d, want %d\n", i, y[i], x[i] + 7);
        }
    }
    return bad;
}

static int Pad2d(aclrtStream s)
{
    const uint32_t rows = 16, cols = 31, bd = 3, n = rows * cols * bd;
    std::vector<float> x(n), y(n);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (float)(i % 50) - 20;
    }
    void *xd = DevAlloc(n * 4), *yd = DevAlloc(n * 4);
    CHECK_ACL(aclrtMemcpy(xd, n * 4, x.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK_ACL(ACLRT_LAUNCH_KERNEL(pad2d)(bd, s, xd, yd, rows, cols));
    CHECK_ACL(aclrtSynchronizeStream(s));
    CHECK_ACL(aclrtMemcpy(y.data(), n * 4, yd, n * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (y[i] != x[i] * 2 + 1 && bad++ < 5) {
            std::printf("pad2d: y[%u] = %g, want %g\n", i, y[i], x[i] * 2 + 1);
        }
    }
    return bad;
}

static int Uneven(aclrtStream s)
{
    int fails = 0;
    for (uint32_t total : {1u, 15u, 1000u, 4099u, 77777u}) {
        for (uint32_t bd : {1u, 7u, 40u}) {
            if (total < bd) {
                continue;
            }
            UnevenTiling t{total % bd, total / bd + 1, total / bd, 512};
            std::vector<uint16_t> x(total), y(total), z(total);
            /* fp16 bit patterns of i % 100 (exact small integers) and of 0.5. */
            std::vector<float> xf(total);
            for (uint32_t i = 0; i < total; i++) {
                _Float16 h = (_Float16)(float)(i % 100);
                _Float16 half_ = (_Float16)0.5f;
                std::memcpy(&x[i], &h, 2);
                std::memcpy(&y[i], &half_, 2);
                xf[i] = (float)(i % 100);
            }
            size_t sz = total * 2;
            void *xd = DevAlloc(sz), *yd = DevAlloc(sz), *zd = DevAlloc(sz);
            CHECK_ACL(aclrtMemcpy(xd, sz, x.data(), sz, ACL_MEMCPY_HOST_TO_DEVICE));
            CHECK_ACL(aclrtMemcpy(yd, sz, y.data(), sz, ACL_MEMCPY_HOST_TO_DEVICE));
            CHECK_ACL(ACLRT_LAUNCH_KERNEL(uneven_add)(bd, s, xd, yd, zd, &t));
            CHECK_ACL(aclrtSynchronizeStream(s));
            CHECK_ACL(aclrtMemcpy(z.data(), sz, zd, sz, ACL_MEMCPY_DEVICE_TO_HOST));
            int bad = 0;
            for (uint32_t i = 0; i < total; i++) {
                _Float16 h;
                std::memcpy(&h, &z[i], 2);
                bad += (float)h != xf[i] + 0.5f;
            }
            if (bad != 0) {
                fails++;
                std::printf("uneven: total %u blockDim %u: %d wrong\n", total, bd, bad);
            }
            CHECK_ACL(aclrtFree(xd));
            CHECK_ACL(aclrtFree(yd));
            CHECK_ACL(aclrtFree(zd));
        }
    }
    return fails;
}

static int Args(aclrtStream s)
{
    void *xd = DevAlloc(1024), *yd = DevAlloc(1024), *td = DevAlloc(8);
    void *h = nullptr;
    CHECK_ACL(aclrtMallocHost(&h, 8));
    uint32_t local[2] = {8, 1};
    Report("host", ACLRT_LAUNCH_KERNEL(ws_kernel)(1, s, xd, yd, nullptr, h));
    Report("stack", ACLRT_LAUNCH_KERNEL(ws_kernel)(1, s, xd, yd, nullptr, local));
    CHECK_ACL(aclrtFree(td));
    Report("freed", ACLRT_LAUNCH_KERNEL(ws_kernel)(1, s, xd, yd, nullptr, td));
    Report("blockdim0", ACLRT_LAUNCH_KERNEL(err_kernel)(0, s, xd, yd, 0, 16));
    Report("blockdim65536", ACLRT_LAUNCH_KERNEL(err_kernel)(65536, s, xd, yd, 0, 16));
    /* Nothing was enqueued: the stream is clean. */
    Report("sync", aclrtSynchronizeStream(s));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s misc|ws|pad2d|uneven|args|err MODE [BLOCKDIM]\n", argv[0]);
        return 2;
    }
    std::string what = argv[1];
    CHECK_ACL(aclInit(nullptr));
    CHECK_ACL(aclrtSetDevice(0));
    aclrtStream s = nullptr;
    CHECK_ACL(aclrtCreateStream(&s));
    int bad = 0;
    if (what == "misc") {
        bad = Misc(s);
    } else if (what == "ws") {
        bad = Ws(s);
    } else if (what == "pad2d") {
        bad = Pad2d(s);
    } else if (what == "uneven") {
        bad = Uneven(s);
    } else if (what == "args") {
        bad = Args(s);
    } else if (what == "err" && argc >= 3) {
        uint32_t mode = (uint32_t)std::atoi(argv[2]);
        uint32_t bd = argc > 3 ? (uint32_t)std::atoi(argv[3]) : 2;
        void *xd = DevAlloc(4096), *yd = DevAlloc(4096);
        uint32_t n = mode == 3 ? 1040 : 256;
        Report("launch", ACLRT_LAUNCH_KERNEL(err_kernel)(bd, s, xd, yd, mode, n));
        Report("sync", aclrtSynchronizeStream(s));
        /* The stream stays usable after a failed kernel. */
        Report("again", ACLRT_LAUNCH_KERNEL(err_kernel)(1, s, xd, yd, 0, 256));
        Report("sync2", aclrtSynchronizeStream(s));
    } else {
        std::fprintf(stderr, "unknown case %s\n", what.c_str());
        return 2;
    }
    CHECK_ACL(aclrtDestroyStream(s));
    CHECK_ACL(aclrtResetDevice(0));
    CHECK_ACL(aclFinalize());
    if (bad != 0) {
        std::printf("FAIL: %d wrong elements\n", bad);
        return 1;
    }
    std::printf("PASS\n");
    return 0;
}
