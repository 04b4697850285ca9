/* CPU-debug host of the ws_kernel probe (kernels.cpp): ICPU_RUN_KF with GmAlloc buffers and a
 * nullptr workspace computes y = x + 5; with `host` the tiling comes from ordinary host memory
 * instead of GmAlloc, which the kernel's first read of it reports (exit status 1). */
#include "tikicpulib.h"
#include <cstdio>
#include <cstring>
#include <vector>

extern "C" __global__ __aicore__ void ws_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling);

int main(int argc, char **argv)
{
    const uint32_t n = 64, blockDim = 4;
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(n * blockDim * sizeof(int32_t));
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(n * blockDim * sizeof(int32_t));
    uint8_t *tiling = (uint8_t *)AscendC::GmAlloc(8);
    uint32_t t[2] = {n, 5};
    std::memcpy(tiling, t, sizeof t);
    for (uint32_t i = 0; i < n * blockDim; i++) {
        ((int32_t *)x)[i] = (int32_t)i;
    }
    std::vector<uint8_t> hostTiling(8);
    std::memcpy(hostTiling.data(), t, sizeof t);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    if (argc > 1 && std::strcmp(argv[1], "host") == 0) {
        ICPU_RUN_KF(ws_kernel, blockDim, x, y, nullptr, hostTiling.data());
    } else {
        ICPU_RUN_KF(ws_kernel, blockDim, x, y, nullptr, tiling);
    }
    int bad = 0;
    for (uint32_t i = 0; i < n * blockDim; i++) {
        bad += ((int32_t *)y)[i] != (int32_t)i + 5;
    }
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(tiling);
    std::printf(bad == 0 ? "PASS\n" : "FAIL\n");
    return bad == 0 ? 0 : 1;
}
