/* icpu_faults CASE BLOCKDIM: runs the `faults` kernel with case number CASE. Prints the GM
 * buffers' addresses first (so the test can check the addresses in the fault message); for the
 * FIFO case checks the order the values came out in. */
#include "tikicpulib.h"

#include "host_f16.h"

extern "C" __global__ __aicore__ void faults(GM_ADDR x, GM_ADDR y, uint32_t which);

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s CASE BLOCKDIM\n", argv[0]);
        return 2;
    }
    const uint32_t which = static_cast<uint32_t>(std::atoi(argv[1]));
    const int blockDim = std::atoi(argv[2]);
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(1024 * 2);
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(1024 * 2);
    std::printf("x=0x%llx y=0x%llx\n", (unsigned long long)(uintptr_t)x, (unsigned long long)(uintptr_t)y);
    std::fflush(stdout);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(faults, blockDim, x, y, which);
    std::printf("y[0..4] = %g %g %g %g\n", f16_val(y, 0), f16_val(y, 1), f16_val(y, 2), f16_val(y, 3));
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)y);
    std::printf("completed\n");
    return 0;
}
