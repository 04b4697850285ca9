// MatmulCustom-style host program: matmul_custom M N K [bias 0|1] [mode 0|1] [cores] [baseM baseN]
// Computes C = A x B (+ bias) on the device and checks it against a host product (fp16 inputs,
// products exact, fp32 accumulation): every element within 1e-5 * K of the exact value in double.
// Prints the kernel time (launch to synchronize).
#include "acl/acl.h"
#include "aclrtlaunch_matmul_custom.h"
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

bool GenerateTiling(uint32_t M, uint32_t N, uint32_t K, bool bias, uint32_t cores, int32_t baseM, int32_t baseN,
                    std::vector<uint8_t> &out, uint32_t &usedCores);

#define CHECK(x)                                                                                      \
    do {                                                                                              \
        aclError e_ = (x);                                                                            \
        if (e_ != ACL_SUCCESS) {                                                                      \
            std::printf("%s failed: %d %s\n", #x, (int)e_, aclGetRecentErrMsg());                     \
            return 1;                                                                                 \
        }                                                                                             \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::printf("usage: %s M N K [bias] [mode] [cores] [baseM baseN]\n", argv[0]);
        return 2;
    }
    const uint32_t M = std::atoi(argv[1]), N = std::atoi(argv[2]), K = std::atoi(argv[3]);
    const bool bias = argc > 4 && std::atoi(argv[4]) != 0;
    const uint32_t mode = argc > 5 ? std::atoi(argv[5]) : 0;
    const uint32_t cores = argc > 6 ? std::atoi(argv[6]) : 20;
    const int32_t baseM = argc > 8 ? std::atoi(argv[7]) : -1, baseN = argc > 8 ? std::atoi(argv[8]) : -1;
    const bool check = std::getenv("MATMUL_NO_CHECK") == nullptr;

    std::vector<uint8_t> tiling;
    uint32_t used = 0;
    if (!GenerateTiling(M, N, K, bias, cores, baseM, baseN, tiling, used)) {
        return 1;
    }
    std::vector<uint16_t> a((size_t)M * K), b((size_t)K * N);
    std::vector<float> af(a.size()), bf(b.size()), biasv(N), c((size_t)M * N);
    uint32_t s = 7;
    for (size_t i = 0; i < a.size(); i++) {
        s = s * 1664525u + 1013904223u;
        a[i] = aclFloatToFloat16(((float)(s >> 9) / 8388608.0f - 1.0f) * 2.0f);
        af[i] = aclFloat16ToFloat(a[i]);
    }
    for (size_t i = 0; i < b.size(); i++) {
        s = s * 1664525u + 1013904223u;
        b[i] = aclFloatToFloat16(((float)(s >> 9) / 8388608.0f - 1.0f) * 0.5f);
        bf[i] = aclFloat16ToFloat(b[i]);
    }
    for (uint32_t j = 0; j < N; j++) {
        biasv[j] = (float)(j % 17) * 0.125f - 1.0f;
    }

    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    CHECK(aclrtCreateStream(&stream));
    void *da, *db, *dbias, *dc, *dw, *dt;
    CHECK(aclrtMalloc(&da, a.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&db, b.size() * 2, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dbias, N * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dc, c.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dw, 16 * 1024 * 1024, ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMalloc(&dt, tiling.size(), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemcpy(da, a.size() * 2, a.data(), a.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(db, b.size() * 2, b.data(), b.size() * 2, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(dbias, N * 4, biasv.data(), N * 4, ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemcpy(dt, tiling.size(), tiling.data(), tiling.size(), ACL_MEMCPY_HOST_TO_DEVICE));
    CHECK(aclrtMemset(dc, c.size() * 4, 0xff, c.size() * 4));

    auto t0 = std::chrono::steady_clock::now();
    ACLRT_LAUNCH_KERNEL(matmul_custom)(used, stream, da, db, dbias, dc, dw, dt, mode);
    CHECK(aclrtSynchronizeStream(stream));
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(aclrtMemcpy(c.data(), c.size() * 4, dc, c.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST));

    long bad = 0;
    double maxErr = 0;
    if (check) {
        std::vector<double> row(N);
        for (uint32_t i = 0; i < M; i++) {
            for (uint32_t j = 0; j < N; j++) {
                row[j] = bias ? biasv[j] : 0.0;
            }
            for (uint32_t k = 0; k < K; k++) {
                const double x = af[(size_t)i * K + k];
                const float *brow = &bf[(size_t)k * N];
                for (uint32_t j = 0; j < N; j++) {
                    row[j] += x * brow[j];
                }
            }
            for (uint32_t j = 0; j < N; j++) {
                const double err = std::fabs(row[j] - c[(size_t)i * N + j]);
                maxErr = err > maxErr ? err : maxErr;
                if (!(err <= 1e-5 * K)) {
                    if (bad < 3) {
                        std::printf("C[%u][%u] = %.9g, expected %.9g\n", i, j, c[(size_t)i * N + j], row[j]);
                    }
                    bad++;
                }
            }
        }
    }
    std::printf("matmul_custom %ux%ux%u bias %d mode %u on %u cores: kernel %.3f ms, max |error| %.3g, %ld wrong\n",
                M, N, K, (int)bias, mode, used, ms, maxErr, bad);
    aclrtFree(da);
    aclrtFree(db);
    aclrtFree(dbias);
    aclrtFree(dc);
    aclrtFree(dw);
    aclrtFree(dt);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    std::printf("%s\n", bad == 0 ? "PASS" : "FAIL");
    return bad == 0 ? 0 : 1;
}
